public import Foundation

/// Key management and backups of a vault (`/admin/lock`, `unlock`, `rotate`, `rekey`, `backup`):
/// declared here so the HTTP layer can serve it without knowing the storage. `Vault` (in
/// KeychainStore) implements it.
///
/// Lock semantics: while locked the vault holds no key in memory (data keys and the keys derived
/// from the master key are released and wiped; the master key itself is never kept); every
/// item-store operation and backups throw `KeychainError.interactionNotAllowed`. Client
/// authentication keeps working (tokens are stored as hashes and need no key). Every method
/// throws `KeychainError` only.
public protocol VaultAdministration: Sendable {
    /// True while the vault holds no keys.
    var isLocked: Bool { get }

    /// Drops every key from memory; waits for operations that are using a key to finish first.
    /// Idempotent.
    func lock()

    /// Reads the master key file again and loads the keyring with it. A key that does not match
    /// the stored key check value is `authFailed`, and the vault stays locked. A no-op when unlocked.
    func unlock() throws

    /// Starts a new data-key term (reading the master key file again to wrap its key); new secrets
    /// are sealed under it, old terms keep opening theirs. With `reencrypt`, a background job
    /// re-seals every older secret under the new term (progress in `status.reencryption`) and
    /// then retires the older terms that seal nothing. Returns the new term.
    /// `interactionNotAllowed` when locked, `authFailed` when the key file no longer opens the keyring.
    func rotate(reencrypt: Bool) throws -> UInt32

    /// Writes a new random master key file and re-wraps the keyring under it, crash-safely:
    /// at every point of the sequence one of the key files on disk opens the keyring.
    /// Returns how many data keys were re-wrapped. `interactionNotAllowed` when locked.
    func rekey() throws -> Int

    /// A consistent snapshot of the database, taken while writes continue, sealed and
    /// authenticated as a whole under a key derived from the master key (never the master key
    /// itself); `keychaind restore` opens it. Returned as an open file that no directory names
    /// any more (it disappears when closed), so that it is sent without being held in memory.
    /// `interactionNotAllowed` when locked.
    func backupFile() throws -> ReadOnlyFile

    /// Lock state, keyring terms and job progress, for the admin API and metrics.
    var status: VaultStatus { get }
}

/// A snapshot of a vault's key state. Read it often: it takes no key and touches no disk.
public struct VaultStatus: Sendable, Equatable {
    /// True while no key is in memory.
    public var locked: Bool
    /// The term new secrets are sealed under.
    public var currentTerm: UInt32
    /// How many secrets the current term has sealed (persisted with the secrets; may over-count).
    public var currentTermEncryptions: UInt64
    /// How many data-key terms the keyring holds.
    public var termCount: Int
    /// The last (or running) background re-encryption, nil when none ran since start.
    public var reencryption: ReencryptionProgress?
    /// When the last backup (HTTP or scheduled) was completed, nil when none since start.
    public var lastBackup: Date?
    /// How many backups completed since start.
    public var backupsCompleted: Int

    public init(
        locked: Bool, currentTerm: UInt32, currentTermEncryptions: UInt64, termCount: Int,
        reencryption: ReencryptionProgress? = nil, lastBackup: Date? = nil, backupsCompleted: Int = 0
    ) {
        self.locked = locked
        self.currentTerm = currentTerm
        self.currentTermEncryptions = currentTermEncryptions
        self.termCount = termCount
        self.reencryption = reencryption
        self.lastBackup = lastBackup
        self.backupsCompleted = backupsCompleted
    }
}

/// Progress of a background re-encryption of older secrets under `targetTerm`.
public struct ReencryptionProgress: Sendable, Equatable {
    public enum State: String, Sendable {
        /// Re-sealing batches.
        case running
        /// Every secret that was older than `targetTerm` at the start is re-sealed.
        case finished
        /// Stopped early: the vault was locked or closed, or a batch failed (see the log);
        /// `POST /admin/rotate?reencrypt=true` starts again.
        case interrupted
    }

    public var state: State
    /// The term secrets are re-sealed under.
    public var targetTerm: UInt32
    /// Secrets under older terms when the job started.
    public var total: Int
    /// Secrets re-sealed so far.
    public var done: Int

    public init(state: State, targetTerm: UInt32, total: Int, done: Int) {
        self.state = state
        self.targetTerm = targetTerm
        self.total = total
        self.done = done
    }

    /// `done / total` in 0...1 (1 when there was nothing to do).
    public var fraction: Double { total == 0 ? 1 : min(1, Double(done) / Double(total)) }
}
