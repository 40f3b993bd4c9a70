import ArgumentParser
import Foundation
import KeychainConfig
import KeychaindApp
import KeychainStore
import Logging

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the server; a data directory without a database is initialised first.")

    @Option(name: .long, help: "Config file (see config/keychaind.toml).")
    var config: String?

    @Option(name: .long, help: "HOST:PORT to listen on (default 127.0.0.1:8420).")
    var listen: String?

    @Option(name: .customLong("data-dir"), help: "Data directory (default ./data).")
    var dataDir: String?

    @Flag(
        name: .long,
        help: "Start locked: master.key is not read (it may be absent) until POST /admin/unlock. Needs an initialised data directory.")
    var locked = false

    func run() throws {
        // Block the stop signals before any thread starts, so that every thread inherits the mask
        // and the main thread alone receives them in sigwait.
        let stopSignals = StopSignals.block()

        let configuration = try loadConfiguration(file: config, flags: flags)
        do { try configuration.checkTransport() } catch { throw Failure(error) }
        let logger = ServerLog.bootstrap(level: configuration.logLevel)
        defer { ServerLog.flush() }
        ProcessHardening.forbidCoreDumps(logger: logger)

        #if KEYCHAIND_FAULT_INJECTION
        var directory = DataDirectory(path: configuration.dataDir)
        directory.faults = FaultInjection.fromEnvironment(ProcessInfo.processInfo.environment)
        if let point = directory.faults.armedPoint {
            logger.warning("fault injection armed: the process exits with status 70 at \(point)")
        }
        #else
        let directory = DataDirectory(path: configuration.dataDir)
        #endif
        let app: KeychaindApp
        let directoryLock: DataDirectoryLock
        let port: UInt16
        do {
            directoryLock = try directory.acquireLock()
            let opened = try KeychaindApp.openVault(directory, configuration: configuration, locked: locked, logger: logger)
            if locked { logger.notice("started locked: POST /v1/admin/unlock loads \(directory.masterKeyPath)") }
            app = try KeychaindApp(
                vault: opened.vault, backups: opened.backups, configuration: configuration, logger: logger,
                requestLog: ServerLog.requestLog(level: configuration.logLevel))
            port = try app.start()
        } catch {
            throw Failure(error)
        }
        let scheme = configuration.tlsCertFile.isEmpty ? "http" : "https"
        var address = configuration.listen
        address.port = port
        logger.notice(
            "keychaind listening on \(scheme)://\(address)", metadata: ["workers": "\(Wiring.workerThreads(configuration))"])

        let signal = stopSignals.wait()
        logger.notice("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"), shutting down")
        app.stop()
        withExtendedLifetime(directoryLock) {}
        logger.notice("stopped")
    }

    /// The flags this command takes, as configuration keys.
    private var flags: [String: String] {
        var flags: [String: String] = [:]
        if let listen { flags["listen"] = listen }
        if let dataDir { flags["dataDir"] = dataDir }
        return flags
    }
}
