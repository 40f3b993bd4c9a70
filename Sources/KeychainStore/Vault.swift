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
public final class Vault: VaultAdministration, Sendable {
    let pool: ConnectionPool
    private let itemStore: SQLiteItemStore
    private let clientStore: SQLiteClientStore
    /// The data keys; `rotate()` and `rewrap(under:)` for key management.
    public let keyring: Keyring
    /// The data directory the vault was opened from (nil for a vault built in tests without one:
    /// `unlock()` and `rekey()` then answer errSecUnimplemented).
    let directory: DataDirectory?
    let logger: Logger

    struct Jobs {
        var reencryption: ReencryptionJob?
        var lastBackup: Date?
        var backupsCompleted = 0
    }

    let jobs = Mutex(Jobs())
    /// Serialises unlock, rekey and backups (each reads or replaces the master key file, or
    /// seals under a key derived from it).
    let keyFileOperations = Mutex(())

    /// How many secrets one re-encryption transaction re-seals.
    static let reencryptionBatchSize = 200

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
    }

    public var items: any ItemStore { itemStore }
    /// The item writes' group commit since start (metrics).
    public var commitStatistics: CommitStatistics { itemStore.commitStatistics }
    /// Whether an item write submitted now would wait for a commit in flight.
    public var commitInFlight: Bool { itemStore.commits.inFlight }
    public var clients: any ClientStore { clientStore }
    public var tokenIssuer: any ClientTokenIssuer { OpenSSLClientTokenIssuer() }

    /// Stops a running re-encryption and closes every connection; idempotent. Later calls on the
    /// stores fail with errSecIO.
    public func close() {
        jobs.withLock { $0.reencryption }?.cancel()
        pool.close()
    }

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
                let key = try directory.resolveMasterKey(candidate, pool: pool, logger: logger)
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

    public func rotate(reencrypt: Bool) throws -> UInt32 {
        let term = try keyring.rotate()
        if reencrypt { startReencryption(olderThan: term) }
        return term
    }

    /// Starts (or restarts) the background job that re-seals every secret older than `term`.
    func startReencryption(olderThan term: UInt32) {
        let job = ReencryptionJob(targetTerm: term)
        let previous = jobs.withLock { jobs -> ReencryptionJob? in
            defer { jobs.reencryption = job }
            return jobs.reencryption
        }
        previous?.cancel()
        let store = itemStore
        let logger = logger
        let thread = Thread {
            job.run(store: store, batchSize: Self.reencryptionBatchSize, logger: logger)
        }
        thread.name = "keychaind-reencrypt"
        thread.start()
    }

    /// Waits (bounded) until the current re-encryption job is no longer running; for tests.
    @discardableResult
    public func waitForReencryption(timeout: Double = 30) -> ReencryptionProgress? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let progress = jobs.withLock { $0.reencryption?.progress }
            if progress?.state != .running { return progress }
            usleep(10_000)
        }
        return jobs.withLock { $0.reencryption?.progress }
    }

    // MARK: Rekey

    /// Replaces the master key. The order makes every crash point recoverable:
    /// 1. write the new key to `master.key.new` (temp file, fsync, rename, directory fsync);
    /// 2. re-wrap every data key and the key check value under it in one transaction;
    /// 3. rename `master.key.new` over `master.key`, fsync the directory.
    /// Opening (and unlocking) tries `master.key` first and, when its check value does not
    /// match, `master.key.new` (finishing step 3); a stale `master.key.new` that opens nothing
    /// (crash between 1 and 2) is removed.
    public func rekey() throws -> Int {
        try keyFileOperations.withLock { _ in
            guard let directory else { throw KeychainError(.unimplemented, "this vault has no data directory") }
            return try StoreErrors.map {
                try keyring.withKeys {
                    let newKey = try MasterKeyFile.generate()
                    try MasterKeyFile.write(newKey, to: directory.pendingMasterKeyPath)
                    #if KEYCHAIND_FAULT_INJECTION
                    try directory.faults.reach(.rekeyAfterNewKeyFile)
                    #endif
                    let count: Int
                    do {
                        count = try keyring.rewrapHoldingKeys(under: newKey)
                    } catch {
                        // master.key.new stays: harmless when the transaction did not commit (the
                        // next open removes it), essential if it did despite the error.
                        logger.error("rekey: re-wrapping the keyring failed; master.key is unchanged")
                        throw error
                    }
                    #if KEYCHAIND_FAULT_INJECTION
                    try directory.faults.reach(.rekeyAfterRewrap)
                    #endif
                    try AtomicFile.renameDurably(directory.pendingMasterKeyPath, to: directory.masterKeyPath)
                    #if KEYCHAIND_FAULT_INJECTION
                    try directory.faults.reach(.rekeyAfterRename)
                    #endif
                    logger.notice("rekeyed: new master key written, keyring re-wrapped", metadata: ["terms": "\(count)"])
                    return count
                }
            }
        }
    }

    // MARK: Status

    public var status: VaultStatus {
        let (reencryption, lastBackup, completed) = jobs.withLock {
            ($0.reencryption?.progress, $0.lastBackup, $0.backupsCompleted)
        }
        return VaultStatus(
            locked: keyring.isLocked, currentTerm: keyring.currentTerm,
            currentTermEncryptions: keyring.currentTermEncryptions, termCount: keyring.terms.count,
            reencryption: reencryption, lastBackup: lastBackup, backupsCompleted: completed)
    }
}

/// What a re-encryption does to a store, on either backend.
protocol ReencryptingStore: Sendable {
    /// How many stored secrets are sealed under a term older than `term`. Needs no key.
    func countSecrets(olderThan term: UInt32) throws -> Int
    /// Re-seals up to `limit` secrets sealed under a term older than `term` with the current
    /// term, in one transaction, in `seq` order after `afterSeq`. Returns the last `seq` visited
    /// and how many were re-sealed, or nil when none is left.
    func reencryptBatch(olderThan term: UInt32, after afterSeq: Int64, limit: Int) throws -> (lastSeq: Int64, count: Int)?
    /// Retires the terms older than `term` that seal nothing any more; returns them.
    func retireTerms(olderThan term: UInt32) throws -> [UInt32]
}

/// One background re-encryption: batches of `reencryptBatch` until none is left, the vault is
/// locked or closed, or it is cancelled by a newer job.
final class ReencryptionJob: Sendable {
    private let state: Mutex<ReencryptionProgress>
    private let cancelled = Atomic<Bool>(false)

    init(targetTerm: UInt32) {
        state = Mutex(ReencryptionProgress(state: .running, targetTerm: targetTerm, total: 0, done: 0))
    }

    var progress: ReencryptionProgress { state.withLock { $0 } }

    func cancel() { cancelled.store(true, ordering: .relaxed) }

    func run(store: any ReencryptingStore, batchSize: Int, logger: Logger) {
        let term = progress.targetTerm
        do {
            let total = try store.countSecrets(olderThan: term)
            state.withLock { $0.total = total }
            logger.info("re-encryption started", metadata: ["term": "\(term)", "secrets": "\(total)"])
            var after: Int64 = 0
            while !cancelled.load(ordering: .relaxed) {
                guard let (last, count) = try store.reencryptBatch(olderThan: term, after: after, limit: batchSize)
                else {
                    let retired = try store.retireTerms(olderThan: term)
                    state.withLock { $0.state = .finished }
                    logger.info(
                        "re-encryption finished",
                        metadata: ["term": "\(term)", "secrets": "\(progress.done)", "retiredTerms": "\(retired)"])
                    return
                }
                after = last
                state.withLock { $0.done += count }
            }
            state.withLock { $0.state = .interrupted }
        } catch {
            state.withLock { $0.state = .interrupted }
            logger.warning("re-encryption interrupted", metadata: ["term": "\(term)", "reason": "\(error)"])
        }
    }
}
