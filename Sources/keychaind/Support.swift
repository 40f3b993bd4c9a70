import ArgumentParser
import Foundation
import KeychainConfig
import KeychainObservability
import Logging

/// A start-up failure: printed as `keychaind: <message>` on stderr, exit status 1.
struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ error: any Error) { description = String(describing: error) }
}


/// The configuration a command runs with: defaults < `file` < environment < `flags`; a problem
/// becomes a start-up `Failure` naming the key.
func loadConfiguration(file: String?, flags: [String: String]) throws -> ServerConfiguration {
    do {
        return try ConfigurationLoader.load(filePath: file, environment: ProcessInfo.processInfo.environment, flags: flags)
    } catch {
        throw Failure(error)
    }
}

/// keychaind's log: swift-log writing to stderr (`StandardErrorLogHandler`).
enum ServerLog {
    static let label = "keychaind"

    /// Sets up swift-log once, writing to stderr at `level`.
    static func bootstrap(level: ServerConfiguration.LogLevel) -> Logger {
        LoggingSystem.bootstrap { label in handler(label: label, level: level) }
        return Logger(label: Self.label)
    }

    /// The backend of `bootstrap`'s logger, for the request log to write its lines to directly.
    static func requestLog(level: ServerConfiguration.LogLevel) -> StandardErrorLogHandler {
        handler(label: label, level: level)
    }

    private static func handler(label: String, level: ServerConfiguration.LogLevel) -> StandardErrorLogHandler {
        StandardErrorLogHandler(label: label, level: Logger.Level(rawValue: level.rawValue) ?? .info)
    }

    /// Writes out the log lines still queued (before an exit).
    static func flush() { StandardErrorLogHandler.flush() }
}

/// SIGINT and SIGTERM, blocked in every thread and received by `sigwait` in one place.
struct StopSignals {
    private var set = sigset_t()

    static func block() -> StopSignals {
        var signals = StopSignals()
        sigemptyset(&signals.set)
        sigaddset(&signals.set, SIGINT)
        sigaddset(&signals.set, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &signals.set, nil)
        return signals
    }

    /// Waits for one of the signals and returns it.
    func wait() -> Int32 {
        var set = self.set
        var received: Int32 = 0
        sigwait(&set, &received)
        return received
    }
}
