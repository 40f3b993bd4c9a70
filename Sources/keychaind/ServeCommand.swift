import ArgumentParser
import Foundation
import KeychainAPI
import KeychainConfig
import KeychainHTTP
import KeychainObservability
import KeychainRefresh
import KeychainStore
import Logging
import MicroHTTPDServer

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
        let vault: any ServedVault
        let server: MicroHTTPDServer
        let directoryLock: DataDirectoryLock
        var backups: BackupScheduler?
        var backgroundRefresher: BackgroundRefresher?
        let observe: Observe
        do {
            directoryLock = try directory.acquireLock()
            switch configuration.storageBackend {
            case .sqlite:
                let opened = try openSQLite(directory, configuration: configuration, logger: logger)
                if configuration.backupInterval > 0 {
                    let scheduler = BackupScheduler(
                        vault: opened, directory: configuration.effectiveBackupDirectory,
                        intervalSeconds: configuration.backupInterval, keep: configuration.backupKeep, logger: logger)
                    try scheduler.start()
                    backups = scheduler
                }
                vault = opened
            case .postgresql:
                vault = try openPostgreSQL(directory, configuration: configuration, logger: logger)
            }
            if locked { logger.notice("started locked: POST /v1/admin/unlock loads \(directory.masterKeyPath)") }
            observe = try Observe.make(configuration, vault: vault, logger: logger)
            let refresher = Wiring.refresher(
                vault: vault, configuration: configuration, logger: logger, auditor: observe.auditor)
            let application = Wiring.application(
                vault: vault, logger: logger, requestLog: ServerLog.requestLog(level: configuration.logLevel),
                observe: observe, configuration: configuration, refresher: refresher)
            // A write waits for its commit on a thread of its own, so that the worker serves its
            // other connections meanwhile (and more writes share the next commit); the server
            // keeps it on its worker when it is the only request in progress.
            let offloadsWrites = vault.writesWaitOffWorkers
            server = MicroHTTPDServer(
                responder: application, settings: try Wiring.serverSettings(configuration), logger: logger,
                offloads: { request in offloadsWrites && request.method != .get && request.method != .head })
            try server.start()
            if configuration.refreshIntervalSeconds > 0 {
                let background = BackgroundRefresher(
                    refresher: refresher, interval: TimeInterval(configuration.refreshIntervalSeconds),
                    concurrency: configuration.refreshConcurrency)
                background.start()
                backgroundRefresher = background
            }
        } catch {
            throw Failure(error)
        }
        let scheme = configuration.tlsCertFile.isEmpty ? "http" : "https"
        var address = configuration.listen
        address.port = server.port
        logger.notice(
            "keychaind listening on \(scheme)://\(address)", metadata: ["workers": "\(Wiring.workerThreads(configuration))"])

        let signal = stopSignals.wait()
        logger.notice("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"), shutting down")
        backgroundRefresher?.stop()
        server.stop()
        observe.auditLog?.close()
        backups?.stop()
        vault.close()
        withExtendedLifetime(directoryLock) {}
        logger.notice("stopped")
    }

    /// The vault in the data directory's SQLite database, initialising the directory first when
    /// it has none.
    private func openSQLite(_ directory: DataDirectory, configuration: ServerConfiguration, logger: Logger) throws -> Vault {
        if !directory.isInitialized {
            if locked {
                throw Failure(DataDirectoryError(
                    .notInitialized,
                    "--locked needs an initialised data directory and \(directory.path) has no database; "
                        + "run `keychaind init --data-dir \(directory.path)` first"))
            }
            try directory.initialize(logger: logger)
        }
        let vault = try directory.open(
            logger: logger, readers: Wiring.workerThreads(configuration), locked: locked,
            quota: Wiring.groupQuota(configuration))
        logger.info(
            "data directory ready",
            metadata: [
                "database": "\(directory.databasePath)", "masterKey": "\(directory.masterKeyPath)",
                "adminToken": "\(directory.adminTokenPath)",
            ])
        return vault
    }

    /// This node's vault on PostgreSQL: the first node over an empty database initialises it
    /// (writing master.key and admin.token here), the others join with a copy of its master.key.
    private func openPostgreSQL(_ directory: DataDirectory, configuration: ServerConfiguration, logger: Logger) throws
        -> PGVault
    {
        try configuration.checkStorage()
        guard configuration.backupInterval == 0 else {
            throw ConfigurationError(
                "backup.interval: scheduled backups copy a SQLite database; on PostgreSQL back up with pg_dump or base "
                    + "backups (docs/operations.md) and set backup.interval = 0")
        }
        let settings = Wiring.postgresql(configuration)
        if !locked, try directory.initializePostgreSQL(settings, logger: logger) {
            logger.notice("initialised the PostgreSQL database; the first admin token is in \(directory.adminTokenPath)")
        }
        let vault = try directory.openPostgreSQL(
            settings, release: KeychaindVersion.current, logger: logger, locked: locked, quota: Wiring.groupQuota(configuration))
        logger.info("PostgreSQL vault ready", metadata: ["masterKey": "\(directory.masterKeyPath)"])
        return vault
    }

    /// The flags this command takes, as configuration keys.
    private var flags: [String: String] {
        var flags: [String: String] = [:]
        if let listen { flags["listen"] = listen }
        if let dataDir { flags["dataDir"] = dataDir }
        return flags
    }
}
