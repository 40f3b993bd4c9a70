#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
public import KeychainCore
package import Logging
import Synchronization

/// An open vault on one storage backend (`VaultBackend`: SQLite for one node, PostgreSQL for
/// several): the item and client stores, the token issuer, the keyring, and its administration
/// (lock, unlock, rotate, rekey, backup: `VaultAdministration`).
public final class Vault: VaultAdministration {
    package let backend: any VaultBackend
    /// The data keys (metrics read the term; the audit log derives its key from it); `rotate()`
    /// and `rewrap(under:)` for key management.
    public let keyring: Keyring
    /// The data directory the vault was opened from (nil for a vault built in tests without one:
    /// `unlock()` and `rekey()` then answer errSecUnimplemented).
    package let directory: DataDirectory?
    package let logger: Logger
    /// The vault's identity, read from the database when it opens: a random UUID (lowercase
    /// 8-4-4-4-12) made once when the database was made or migrated, the same on every node.
    public let clusterID: String

    struct Backups {
        var last: Date?
        var completed = 0
    }

    let backups = Mutex(Backups())
    let reencryptions: Reencryptions
    /// Serialises unlock, rekey and backups (each reads or replaces the master key file, or
    /// seals under a key derived from it).
    let keyFileOperations = Mutex(())

    package init(backend: any VaultBackend, keyring: Keyring, directory: DataDirectory?, logger: Logger) throws {
        self.backend = backend
        self.keyring = keyring
        self.directory = directory
        self.logger = logger
        clusterID = try StoreErrors.map { try backend.clusterID() }
        reencryptions = Reencryptions(store: backend.items, logger: logger)
    }

    public var items: any ItemStore { backend.items }
    public var clients: any ClientStore { backend.clients }
    public var loginRoles: any LoginRoleStore { backend.loginRoles }
    /// The OAuth providers, their client secrets sealed in the same keyring as the items.
    public var providers: any ProviderStore { backend.providers }
    /// The connect flow's sessions, shared by every node.
    public var connectSessions: any ConnectSessionStore { backend.connectSessions }
    public var webhooks: any WebhookStore { backend.webhooks }
    public var tokenIssuer: any ClientTokenIssuer { OpenSSLClientTokenIssuer() }
    /// The item writes' group commit since start (metrics; none on PostgreSQL, which shares WAL
    /// flushes itself).
    public var commitStatistics: CommitStatistics { backend.commitStatistics }
    /// Whether writes are better answered off libmicrohttpd's workers. On SQLite a write waits
    /// for a commit it shares with others, and a worker waiting for one would stall its other
    /// connections; on PostgreSQL a write runs on its thread's own connection, which threads
    /// beyond the workers would multiply.
    public var writesWaitOffWorkers: Bool { backend.writesWaitOffWorkers }
    /// Which backend, and whether it answered lately (health).
    public var storage: StorageHealth { backend.storage }
    /// The database connections' use and latency (metrics), nil for SQLite's file.
    public var database: DatabaseStatistics? { backend.database }
    /// The lock several nodes take around a token exchange, nil with one node.
    public var refreshExchangeLock: (any RefreshExchangeLock)? { backend.refreshExchangeLock }
    /// Holds on provider apps after a `Retry-After`, as every node sharing the database sees them.
    public var providerHolds: any ProviderHoldStore { backend.providerHolds }

    /// Stops a running re-encryption and closes the backend; idempotent. Later calls on the
    /// stores fail with errSecIO.
    public func close() {
        reencryptions.cancel()
        backend.close()
    }

    // MARK: Lock and unlock

    public var isLocked: Bool { keyring.isLocked }

    /// errSecParam `cluster not upgraded` while a node of an older release is live: it could not
    /// enforce the state about to be created (a token's expiry, a login role), so none is made.
    public func requireUpgradedCluster() throws {
        if let older = try StoreErrors.map({ try backend.olderLiveRelease() }) {
            throw KeychainError.param("cluster not upgraded: a node running release \(older) is live; upgrade every node first")
        }
    }

    /// Locks the vault at once and records the lock for other nodes, if any. When that record
    /// cannot be written, this node is locked all the same and the failure is logged.
    public func lock() {
        do {
            try backend.recordLocked(true)
        } catch {
            logger.error("lock: the database did not record it; only this node is locked", metadata: ["error": "\(error)"])
        }
        keyring.lock()
    }

    /// Reads `master.key` again (completing an interrupted rekey if `master.key.new` is the key
    /// that opens the keyring), unlocks, and records the unlock for other nodes (each reads its
    /// own copy of the key). A key that does not match the key check value is errSecAuthFailed
    /// and the vault stays locked.
    public func unlock() throws {
        try keyFileOperations.withLock { _ in
            guard keyring.isLocked else { return }
            guard let directory else { throw KeychainError(.unimplemented, "this vault has no data directory") }
            do {
                let candidate = try MasterKeyFile.read(from: directory.masterKeyPath)
                let key = try directory.resolveMasterKey(candidate, storage: backend.keyringStorage, logger: logger)
                try keyring.unlock(masterKey: key)
                try backend.recordLocked(false)
                logger.notice(backend.sharesLockState ? "vault unlocked on every node" : "vault unlocked")
            } catch let error as DataDirectoryError {
                logger.warning("unlock refused", metadata: ["reason": "\(error.description)"])
                throw KeychainError.authFailed(error.description)
            } catch let error as KeychainError {
                if error.code == .authFailed {
                    logger.warning("unlock refused: the master key file does not open this keyring")
                    throw KeychainError.authFailed(
                        "the master key \(directory.masterKeyPath) does not open this vault's keyring; the vault stays locked")
                }
                throw error
            } catch {
                throw StoreErrors.keychainError(for: error)
            }
        }
    }

    // MARK: Rotation and re-encryption

    public func rotate(reencrypt: Bool) throws -> UInt32 { try reencryptions.rotate(keyring, reencrypt: reencrypt) }

    /// Waits (bounded) until the current re-encryption job is no longer running; for tests.
    @discardableResult
    public func waitForReencryption(timeout: Double = 30) -> ReencryptionProgress? {
        reencryptions.wait(timeout: timeout)
    }

    // MARK: Rekey

    /// Replaces the master key file and re-wraps the keyring under it (`DataDirectory.rekey`).
    /// With several nodes, the others keep their keys in memory and go on serving; each needs
    /// the new `master.key` copied into its data directory before it next unlocks, starts, or
    /// learns of a new term (docs/operations.md, "Several nodes on PostgreSQL").
    public func rekey() throws -> Int {
        try keyFileOperations.withLock { _ in
            guard let directory else { throw KeychainError(.unimplemented, "this vault has no data directory") }
            return try directory.rekey(keyring, logger: logger)
        }
    }

    // MARK: Status

    public var status: VaultStatus {
        let reencryption = reencryptions.progress
        let (lastBackup, completed) = backups.withLock { ($0.last, $0.completed) }
        return VaultStatus(
            locked: keyring.isLocked, currentTerm: keyring.currentTerm,
            currentTermEncryptions: keyring.currentTermEncryptions, termCount: keyring.terms.count,
            reencryption: reencryption, lastBackup: lastBackup, backupsCompleted: completed)
    }
}
