import Foundation
public import Logging
import Synchronization

/// A swift-log backend that keeps every line in memory, for a test that reads what the app logs
/// (`TestApp(logger: capture.logger)`): `level message key=value ...`, metadata sorted by key.
public final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    /// A logger writing here at `level` and above.
    public func logger(level: Logger.Level = .debug) -> Logger {
        Logger(label: "keychaind") { [self] label in Handler(capture: self, logLevel: level) }
    }

    /// Every line so far, one per line.
    public var text: String { lines.withLock { $0.joined(separator: "\n") } }

    fileprivate func append(_ line: String) { lines.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var logLevel: Logger.Level
        var metadata: Logger.Metadata = [:]

        init(capture: LogCapture, logLevel: Logger.Level) {
            self.capture = capture
            self.logLevel = logLevel
        }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            var line = "\(event.level) \(event.message)"
            for (key, value) in all.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
            capture.append(line)
        }
    }
}
