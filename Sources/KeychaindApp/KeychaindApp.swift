import Foundation
import KeychainAPI
import KeychainCore
public import KeychainConfig
public import KeychainHTTP
import KeychainObservability
public import KeychainRefresh
public import KeychainStore
public import KeychainConnect
import KeychainPostgreSQL
import KeychainSQLite
public import Logging
import MicroHTTPDServer
import Synchronization

/// keychaind's app, as `keychaind serve` runs it and the tests serve it: the vault, the audit
/// log and metrics, the token refresher and the `KeychainApplication` responder over them, and
/// what `start` and `stop` run (libmicrohttpd on the configured address, the background
/// refresher). The executable keeps the command line, the process's hardening, its signals and
/// the data directory's lock.
public final class KeychaindApp: Sendable {
    public let configuration: ServerConfiguration
    public let vault: Vault
    /// SQLite's scheduled backups (`backup.interval`), started with the vault; stopped by `stop`.
    public let backups: BackupScheduler?
    public let observe: Observe
    public let refresher: TokenRefresher
    /// The connect flow's waits on this node (on PostgreSQL, their poll thread runs between
    /// `start` and `stop`).
    public let connectWaiters: ConnectWaiters
    /// Delivers webhook events; started and stopped with the server.
    public let webhooks: WebhookDeliverer
    /// The responder: requests go straight into `respond(to:)` in process, or through `start`'s server.
    public let application: KeychainApplication
    private let logger: Logger
    private let running = Mutex<Running?>(nil)

    private struct Running {
        let server: MicroHTTPDServer
        let background: BackgroundRefresher?
        let purger: TokenPurger
    }

    /// Assembles the app over an opened vault: opens the audit log (a log that cannot be opened
    /// throws when `audit.failClosed`), makes the refresher and the responder. Nothing listens
    /// until `start`.
    public init(
        vault: Vault, backups: BackupScheduler? = nil, configuration: ServerConfiguration, logger: Logger,
        requestLog: (any PreformattedLog)? = nil
    ) throws {
        self.configuration = configuration
        self.vault = vault
        self.backups = backups
        self.logger = logger
        observe = try Observe.make(configuration, vault: vault, logger: logger)
        refresher = Wiring.refresher(vault: vault, configuration: configuration, logger: logger, auditor: observe.auditor)
        connectWaiters = Wiring.connectWaiters(vault: vault, configuration: configuration, logger: logger)
        webhooks = Wiring.webhookDeliverer(vault: vault, configuration: configuration, logger: logger)
        application = Wiring.application(
            vault: vault, logger: logger, requestLog: requestLog, observe: observe, configuration: configuration,
            refresher: refresher, connectWaiters: connectWaiters, deliverer: webhooks)
    }

    /// The vault `serve` runs over: the data directory's SQLite database (initialising the
    /// directory first when it has none, and starting the scheduled backups), or this node's
    /// vault on PostgreSQL (`storage.backend`). `locked`: master.key is not read until unlock.
    /// `scheduledBackups: false`: none even when configured (a command that opens the vault briefly).
    public static func openVault(
        _ directory: DataDirectory, configuration: ServerConfiguration, locked: Bool = false, scheduledBackups: Bool = true,
        logger: Logger
    ) throws -> (vault: Vault, backups: BackupScheduler?) {
        switch configuration.storageBackend {
        case .sqlite:
            let vault = try openSQLite(directory, configuration: configuration, locked: locked, logger: logger)
            guard scheduledBackups, configuration.backupInterval > 0 else { return (vault, nil) }
            let scheduler = BackupScheduler(
                vault: vault, directory: configuration.effectiveBackupDirectory,
                intervalSeconds: configuration.backupInterval, keep: configuration.backupKeep, logger: logger)
            try scheduler.start()
            return (vault, scheduler)
        case .postgresql:
            return (try openPostgreSQL(directory, configuration: configuration, locked: locked, logger: logger), nil)
        }
    }

    /// Serves the app on `configuration.listen` (libmicrohttpd) and starts the background
    /// refresher (`refresh.intervalSeconds` > 0), the purge of expired tokens and connect
    /// sessions, and the watch on connect waits; returns the port listened on.
    @discardableResult
    public func start() throws -> UInt16 {
        // A write waits for its commit on a thread of its own, so that the worker serves its
        // other connections meanwhile (and more writes share the next commit); the server
        // keeps it on its worker when it is the only request in progress.
        let offloadsWrites = vault.writesWaitOffWorkers
        let server = MicroHTTPDServer(
            responder: application, settings: try Wiring.serverSettings(configuration), logger: logger,
            offloads: { request in offloadsWrites && request.method != .get && request.method != .head })
        try server.start()
        var background: BackgroundRefresher?
        if configuration.refreshIntervalSeconds > 0 {
            let refresher = BackgroundRefresher(
                refresher: refresher, interval: TimeInterval(configuration.refreshIntervalSeconds),
                concurrency: configuration.refreshConcurrency)
            refresher.start()
            background = refresher
        }
        webhooks.start()
        let purger = TokenPurger(clients: vault.clients, connectSessions: vault.connectSessions, logger: logger)
        purger.start()
        // One node ends every session itself and wakes their waiters; several must look.
        if vault.storage.backend != .sqlite { connectWaiters.start() }
        running.withLock { $0 = Running(server: server, background: background, purger: purger) }
        return server.port
    }

    /// The port `start` listens on; nil before it.
    public var port: UInt16? { running.withLock { $0?.server.port } }

    /// Stops what `start` started, then closes the audit log, the backups and the vault, in that order.
    public func stop() {
        let stopped = running.withLock { running in
            defer { running = nil }
            return running
        }
        stopped?.background?.stop()
        if stopped != nil { webhooks.stop() }
        stopped?.purger.stop()
        connectWaiters.stop()
        stopped?.server.stop()
        observe.auditLog?.close()
        backups?.stop()
        vault.close()
    }

    /// The vault in the data directory's SQLite database, initialising the directory first when
    /// it has none.
    private static func openSQLite(
        _ directory: DataDirectory, configuration: ServerConfiguration, locked: Bool, logger: Logger
    ) throws -> Vault {
        if !directory.isInitialized {
            if locked {
                throw DataDirectoryError(
                    .notInitialized,
                    "--locked needs an initialised data directory and \(directory.path) has no database; "
                        + "run `keychaind init --data-dir \(directory.path)` first")
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
            ], source: Wiring.logSource)
        return vault
    }

    /// This node's vault on PostgreSQL: the first node over an empty database initialises it
    /// (writing master.key and admin.token here), the others join with a copy of its master.key.
    private static func openPostgreSQL(
        _ directory: DataDirectory, configuration: ServerConfiguration, locked: Bool, logger: Logger
    ) throws -> Vault {
        try configuration.checkStorage()
        guard configuration.backupInterval == 0 else {
            throw ConfigurationError(
                "backup.interval: scheduled backups copy a SQLite database; on PostgreSQL back up with pg_dump or base "
                    + "backups (docs/operations.md) and set backup.interval = 0")
        }
        let settings = Wiring.postgresql(configuration)
        if !locked, try directory.initializePostgreSQL(settings, logger: logger) {
            logger.notice(
                "initialised the PostgreSQL database; the first admin token is in \(directory.adminTokenPath)",
                source: Wiring.logSource)
        }
        let vault = try directory.openPostgreSQL(
            settings, release: KeychaindVersion.current, logger: logger, locked: locked,
            quota: Wiring.groupQuota(configuration))
        logger.info("PostgreSQL vault ready", metadata: ["masterKey": "\(directory.masterKeyPath)"], source: Wiring.logSource)
        return vault
    }
}
