#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
public import KeychainCore
import Logging
import Synchronization

/// An open vault: the item and client stores over one database, the token issuer, the keyring,
/// and its administration (lock, unlock, rotate, rekey, backup: `VaultAdministration`).
public final class Vault: ServedVault {
    let pool: ConnectionPool
    private let itemStore: SQLiteItemStore
    private let clientStore: SQLiteClientStore
    /// The data keys; `rotate()` and `rewrap(under:)` for key management.
    public let keyring: Keyring
    /// The data directory the vault was opened from (nil for a vault built in tests without one:
    /// `unlock()` and `rekey()` then answer errSecUnimplemented).
    let directory: DataDirectory?
    let logger: Logger

    struct Backups {
        var last: Date?
        var completed = 0
    }

    let backups = Mutex(Backups())
    let reencryptions: Reencryptions
    /// Serialises unlock, rekey and backups (each reads or replaces the master key file, or
    /// seals under a key derived from it).
    let keyFileOperations = Mutex(())

    init(
        pool: ConnectionPool, keyring: Keyring, directory: DataDirectory? = nil, logger: Logger,
        quota: GroupQuota = .unlimited
    ) {
        self.pool = pool
        self.keyring = keyring
        self.directory = directory
        self.logger = logger
        itemStore = SQLiteItemStore(pool: pool, keyring: keyring, logger: logger, quota: quota)
        clientStore = SQLiteClientStore(pool: pool)
        reencryptions = Reencryptions(store: itemStore, logger: logger)
    }

    public var items: any ItemStore { itemStore }
    /// The item writes' group commit since start (metrics).
    public var commitStatistics: CommitStatistics { itemStore.commitStatistics }
    public var writesWaitOffWorkers: Bool { true }
    public var clients: any ClientStore { clientStore }
    public var tokenIssuer: any ClientTokenIssuer { OpenSSLClientTokenIssuer() }

    /// Stops a running re-encryption and closes every connection; idempotent. Later calls on the
    /// stores fail with errSecIO.
    public func close() {
        reencryptions.cancel()
        pool.close()
    }

    public var storage: StorageHealth { StorageHealth(backend: .sqlite, reachable: true) }
    public var database: DatabaseStatistics? { nil }
    public var refreshExchangeLock: (any RefreshExchangeLock)? { nil }

    // MARK: Lock and unlock

    public var isLocked: Bool { keyring.isLocked }

    public func lock() { keyring.lock() }

    /// Reads `master.key` again (completing an interrupted rekey if `master.key.new` is the key
    /// that opens the keyring) and unlocks. A key that does not match the key check value is
    /// errSecAuthFailed and the vault stays locked.
    public func unlock() throws {
        try keyFileOperations.withLock { _ in
            guard keyring.isLocked else { return }
            guard let directory else { throw KeychainError(.unimplemented, "this vault has no data directory") }
            do {
                let candidate = try MasterKeyFile.read(from: directory.masterKeyPath)
                let key = try directory.resolveMasterKey(candidate, storage: KeyringTable(pool: pool), logger: logger)
                try keyring.unlock(masterKey: key)
                logger.notice("vault unlocked")
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

    /// Replaces the master key (`DataDirectory.rekey`).
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
