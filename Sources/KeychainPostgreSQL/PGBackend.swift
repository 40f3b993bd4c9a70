import Foundation
package import KeychainCore
package import KeychainStore
import Logging
import Synchronization

/// Storage for one of several active nodes on PostgreSQL: items, clients and the keyring's rows
/// in the database, each node with a copy of the master key file in its data directory. What
/// one node changes, the others follow (`PGClusterWatcher`): the lock state (lock on one node
/// locks every node; unlock on one unlocks every node, each reading its own key file), revoked
/// and new clients (their cached lookups dropped), and the keyring (terms started or retired, a
/// rekey).
package final class PGBackend: VaultBackend {
    private let itemStore: PGItemStore
    private let clientStore: PGClientStore
    private let loginRoleStore: PGLoginRoleStore
    private let providerStore: PGProviderStore
    private let connectSessionStore: PGConnectSessionStore
    package let keyringStorage: any KeyringStorage
    /// For the lock state: a connection of its own, free while a request holds its thread's.
    private let control: PGConnectionSlot
    private let watcher: PGClusterWatcher
    private let statistics: PGStatistics
    private let release: String

    init(
        settings: PGSettings, keyring: Keyring, keyringStorage: PGKeyringStorage, directory: DataDirectory,
        state: PGClusterState.Snapshot, heartbeat: PGHeartbeat, logger: Logger, quota: GroupQuota
    ) {
        let connections = PGConnections(settings: settings)
        self.keyringStorage = keyringStorage
        itemStore = PGItemStore(connections: connections, keyring: keyring, reservations: keyringStorage, quota: quota)
        clientStore = PGClientStore(connections: connections)
        loginRoleStore = PGLoginRoleStore(connections: connections)
        providerStore = PGProviderStore(connections: connections, keyring: keyring, reservations: keyringStorage)
        connectSessionStore = PGConnectSessionStore(connections: connections, keyring: keyring, reservations: keyringStorage)
        control = PGConnectionSlot(settings: settings)
        refreshExchangeLock = PGRefreshExchangeLock(connections: connections)
        providerHolds = PGProviderHoldStore(connections: connections)
        statistics = settings.statistics
        release = heartbeat.release
        let follow = Follower(keyring: keyring, clients: clientStore.cache, directory: directory, logger: logger)
        watcher = PGClusterWatcher(
            settings: settings, initial: state, heartbeat: heartbeat, logger: logger, revoked: { follow.revoked($0, $1) }
        ) { follow.apply($0, $1) }
        watcher.start()
    }

    package var items: any ItemStore & ReencryptingStore { itemStore }
    package var clients: any ClientStore { clientStore }
    package var loginRoles: any LoginRoleStore { loginRoleStore }
    package var providers: any ProviderStore { providerStore }
    package var connectSessions: any ConnectSessionStore { connectSessionStore }
    package var webhooks: any WebhookStore { itemStore }
    package var commitStatistics: CommitStatistics { CommitStatistics() }
    package var writesWaitOffWorkers: Bool { false }
    package var storage: StorageHealth { StorageHealth(backend: .postgresql, reachable: watcher.reachable) }
    package var database: DatabaseStatistics? { statistics.current }
    package let refreshExchangeLock: (any RefreshExchangeLock)?
    package let providerHolds: any ProviderHoldStore
    package var sharesLockState: Bool { true }

    package func clusterID() throws -> String {
        try control.withConnection { db in try PGClusterState.clusterID(on: db) }
    }

    package func olderLiveRelease() throws -> String? {
        let live = try control.withConnection { db in try PGClusterNodes.live(on: db) }
        guard let oldest = live.oldestRelease, oldest.compare(release, options: .numeric) == .orderedAscending else { return nil }
        return oldest
    }

    package func recordLocked(_ locked: Bool) throws {
        try control.withConnection { db in try PGClusterState.setLocked(locked, on: db) }
    }

    /// Backups on PostgreSQL are the database's own (`pg_dump`, base backups): its rows hold only
    /// sealed secrets, as a keychaind backup does.
    package var backupRefusal: KeychainError? { Self.noBackups }

    package func snapshot(into path: String) throws { throw Self.noBackups }

    private static let noBackups = KeychainError(
        .unimplemented,
        "on PostgreSQL, back up the database with pg_dump or base backups (docs/operations.md); keep master.key apart")

    package func close() { watcher.stop() }

    /// What this node does when the shared state changes.
    private final class Follower: Sendable {
        let keyring: Keyring
        let clients: ClientCache
        let directory: DataDirectory
        let logger: Logger
        /// The revocations announced (by their `tokens_version`) since the state was last read.
        private let announced = Mutex(Set<Int64>())

        init(keyring: Keyring, clients: ClientCache, directory: DataDirectory, logger: Logger) {
            self.keyring = keyring
            self.clients = clients
            self.directory = directory
            self.logger = logger
        }

        /// Another node revoked a token: drop its cached entry alone.
        func revoked(_ version: Int64, _ tokenHash: [UInt8]) {
            clients.invalidate(tokenHash: tokenHash)
            announced.withLock { _ = $0.insert(version) }
        }

        func apply(_ old: PGClusterState.Snapshot, _ new: PGClusterState.Snapshot) {
            if new.clientsVersion != old.clientsVersion { clients.invalidate() }
            if new.tokensVersion > old.tokensVersion {
                // A revocation whose announcement did not arrive: drop every cached entry.
                let missed = announced.withLock { announced -> Bool in
                    defer { announced = announced.filter { $0 > new.tokensVersion } }
                    return (old.tokensVersion + 1...new.tokensVersion).contains { !announced.contains($0) }
                }
                if missed { clients.invalidate() }
            }
            if new.locked != old.locked {
                if new.locked {
                    keyring.lock()
                    logger.notice("vault locked by another node")
                } else if keyring.isLocked {
                    do {
                        try keyring.unlock(masterKey: try directory.masterKeyOpening(keyring.storage, logger: logger))
                        logger.notice("vault unlocked by another node")
                    } catch {
                        logger.error(
                            "another node unlocked the vault; this node's master key does not open it and it stays locked",
                            metadata: ["error": "\(StoreErrors.keychainError(for: error))"])
                    }
                }
            }
            if new.keyringVersion != old.keyringVersion, !keyring.isLocked {
                do {
                    try keyring.refreshTerms()
                } catch {
                    logger.error("the keyring changed on another node and cannot be read here", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
