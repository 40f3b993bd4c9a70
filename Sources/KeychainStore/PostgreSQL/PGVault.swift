import Foundation
public import KeychainCore
import Logging
import Synchronization

/// An open vault on PostgreSQL, one of several active nodes: items and clients in the database,
/// the keyring's rows there too, and this node's copy of the master key file in its data
/// directory. What one node changes, the others follow (`PGClusterWatcher`): the lock state
/// (lock on one node locks every node; unlock on one unlocks every node, each reading its own
/// key file), revoked and new clients (their cached lookups dropped), and the keyring (terms
/// started or retired, a rekey).
public final class PGVault: ServedVault {
    private let itemStore: PGItemStore
    private let clientStore: PGClientStore
    public let keyring: Keyring
    let directory: DataDirectory
    let logger: Logger
    /// For the lock state: a connection of its own, free while a request holds its thread's.
    private let control: PGConnectionSlot
    private let watcher: PGClusterWatcher
    private let reencryptions: Reencryptions
    private let statistics: PGStatistics
    /// Serialises unlock and rekey (each reads or replaces the master key file).
    private let keyFileOperations = Mutex(())

    init(
        settings: PGSettings, keyring: Keyring, directory: DataDirectory, state: PGClusterState.Snapshot,
        heartbeat: PGHeartbeat, logger: Logger, quota: GroupQuota
    ) {
        let connections = PGConnections(settings: settings)
        self.keyring = keyring
        self.directory = directory
        self.logger = logger
        itemStore = PGItemStore(connections: connections, keyring: keyring, quota: quota)
        clientStore = PGClientStore(connections: connections)
        control = PGConnectionSlot(settings: settings)
        refreshExchangeLock = PGRefreshExchangeLock(connections: connections)
        statistics = settings.statistics
        reencryptions = Reencryptions(store: itemStore, logger: logger)
        let follow = Follower(keyring: keyring, clients: clientStore.cache, directory: directory, logger: logger)
        watcher = PGClusterWatcher(settings: settings, initial: state, heartbeat: heartbeat, logger: logger) {
            follow.apply($0, $1)
        }
        watcher.start()
    }

    public var items: any ItemStore { itemStore }
    public var clients: any ClientStore { clientStore }
    public var tokenIssuer: any ClientTokenIssuer { OpenSSLClientTokenIssuer() }
    public var commitStatistics: CommitStatistics { CommitStatistics() }
    public var writesWaitOffWorkers: Bool { false }
    public var storage: StorageHealth { StorageHealth(backend: .postgresql, reachable: watcher.reachable) }
    public var database: DatabaseStatistics? { statistics.current }
    public let refreshExchangeLock: (any RefreshExchangeLock)?

    public func close() {
        reencryptions.cancel()
        watcher.stop()
    }

    // MARK: Lock and unlock, for every node

    public var isLocked: Bool { keyring.isLocked }

    /// Locks this node at once and records the lock for the others. When the database cannot be
    /// reached, this node is locked all the same and the failure is logged.
    public func lock() {
        do {
            try control.withConnection { db in try PGClusterState.setLocked(true, on: db) }
        } catch {
            logger.error("lock: the database did not record it; only this node is locked", metadata: ["error": "\(error)"])
        }
        keyring.lock()
    }

    /// Unlocks this node with its master key file, then records the unlock for the others (each
    /// reads its own copy). A key that does not open the keyring is errSecAuthFailed, and every
    /// node stays locked.
    public func unlock() throws {
        try keyFileOperations.withLock { _ in
            guard keyring.isLocked else { return }
            try StoreErrors.map {
                try keyring.unlock(masterKey: try directory.masterKeyOpening(keyring.storage, logger: logger))
                try control.withConnection { db in try PGClusterState.setLocked(false, on: db) }
                logger.notice("vault unlocked on every node")
            }
        }
    }

    // MARK: Keys

    public func rotate(reencrypt: Bool) throws -> UInt32 { try reencryptions.rotate(keyring, reencrypt: reencrypt) }

    /// Waits (bounded) until the current re-encryption job is no longer running; for tests.
    @discardableResult
    public func waitForReencryption(timeout: Double = 30) -> ReencryptionProgress? {
        reencryptions.wait(timeout: timeout)
    }

    /// Replaces this node's master key file and re-wraps the keyring in the database under it
    /// (`DataDirectory.rekey`). The other nodes keep their keys in memory and go on
    /// serving; each needs the new `master.key` copied into its data directory before it next
    /// unlocks, starts, or learns of a new term (docs/operations.md, "Several nodes on PostgreSQL").
    public func rekey() throws -> Int {
        try keyFileOperations.withLock { _ in
            try directory.rekey(keyring, logger: logger)
        }
    }

    /// Backups on PostgreSQL are the database's own (`pg_dump`, base backups): its rows hold only
    /// sealed secrets, as a keychaind backup does.
    public func backupFile() throws -> ReadOnlyFile {
        throw KeychainError(
            .unimplemented,
            "on PostgreSQL, back up the database with pg_dump or base backups (docs/operations.md); keep master.key apart")
    }

    public var status: VaultStatus {
        VaultStatus(
            locked: keyring.isLocked, currentTerm: keyring.currentTerm,
            currentTermEncryptions: keyring.currentTermEncryptions, termCount: keyring.terms.count,
            reencryption: reencryptions.progress)
    }

    /// What this node does when the shared state changes.
    private struct Follower: Sendable {
        let keyring: Keyring
        let clients: ClientCache
        let directory: DataDirectory
        let logger: Logger

        func apply(_ old: PGClusterState.Snapshot, _ new: PGClusterState.Snapshot) {
            if new.clientsVersion != old.clientsVersion { clients.invalidate() }
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
