import Foundation
import KeychainConcurrency
package import KeychainCore
package import Logging
import Synchronization

/// The data keys of a vault, one per *term*, each wrapped (AES-256-GCM, AAD naming the term)
/// under the master key (KEK) in the `keyring` table, plus a key check value (HMAC-SHA-256 of a
/// fixed label under the KEK) that tells a wrong master key from a damaged keyring.
///
/// New secrets are sealed under the newest term; a new term starts automatically before the
/// current one has sealed `rotationThreshold` secrets (default 0.9 × 2^32, the NIST limit for
/// random 96-bit nonces, with margin); older terms keep opening what they sealed. The count is
/// persisted in the same transaction as the secrets it counts. In memory it never goes down
/// (a rolled-back transaction still counts), so it may only over-count.
///
/// Unlocked, it keeps the data keys and HKDF's extract of the master key (the base of the keys
/// for other purposes: audit tags, backups), never the master key itself: starting a term reads
/// the key file again (`MasterKeySource`).
///
/// The key logic only: the rows are read and written by a `KeyringStorage` (SQLite's `KeyringTable`,
/// PostgreSQL's `PGKeyringStorage`). Sealing is in `Keyring+Sealing.swift`, terms and rekeys in
/// `Keyring+Terms.swift`.
public final class Keyring: Sendable {
    public static let defaultRotationThreshold: UInt64 = UInt64(0.9 * 4_294_967_296.0)
    static let checkLabel = Array("keychaind keyring check value v1".utf8)

    struct Term {
        let key: SecretBytes
        let cipher: AESGCM
    }

    /// Everything secret. Absent while locked.
    struct Keys {
        var terms: [UInt32: Term]
        /// HKDF-Extract(master key): each key for another purpose is an HKDF-Expand of it with its
        /// label (`derivedMAC`, `backupKey()`). It opens no data key. A rekey replaces it.
        var purposeBase: SecretBytes
        /// Keys derived for other purposes (`derivedMAC`), prepared for HMAC, with their labels:
        /// a handful (keychaind has one, the audit tags'), so searched in order. Hashing the label
        /// to look it up in a dictionary cost every audit tag ~350 instructions more (callgrind).
        var derived: [(label: String, key: HMACKey)] = []
    }

    struct State {
        var keys: Keys?
        var termNumbers: [UInt32]
        var current: UInt32
        var currentEncryptions: UInt64
        /// The key check value the keys were loaded under (not secret): a master key read again
        /// must match it.
        var checkValue: [UInt8]? = nil
        /// Encryptions of the current term reserved in the database and not used yet (several
        /// nodes: `SharedKeyringStorage.leaseSize`).
        var leaseRemaining: UInt64 = 0
    }

    let state: PThreadLocked<State>
    /// Held shared by every operation that uses a key (`withKeys`), exclusively by `lock()` and
    /// `unlock(masterKey:)`: when `lock()` returns, no operation holds a key any more.
    private let gate = ReadersWriterLock()
    package let storage: any KeyringStorage
    let masterKeySource: MasterKeySource
    let logger: Logger
    public let rotationThreshold: UInt64
    /// Held while a node reserves encryptions or reads the keyring again, so that threads that
    /// run out together make one reservation.
    let renewal = PThreadLocked(())

    private init(state: State, storage: any KeyringStorage, source: MasterKeySource, threshold: UInt64, logger: Logger) {
        self.state = PThreadLocked(state)
        self.storage = storage
        self.masterKeySource = source
        self.rotationThreshold = threshold
        self.logger = logger
    }

    /// The term new secrets are sealed under.
    public var currentTerm: UInt32 { state.withLock { $0.current } }

    /// Every term the keyring holds, ascending.
    public var terms: [UInt32] { state.withLock { $0.termNumbers } }

    /// How many secrets the current term has sealed.
    public var currentTermEncryptions: UInt64 { state.withLock { $0.currentEncryptions } }

    /// True while no key is in memory (after `lock()`, or opened locked).
    public var isLocked: Bool { state.withLock { $0.keys == nil } }

    /// HMAC-SHA-256 of `message` under a key for another purpose (the audit log's tags), derived
    /// from the master key as HKDF-SHA-256(master key, info: `label`). Rotation leaves it alone;
    /// a rekey (a new master key) changes it. Derived keys live with the data keys: false while
    /// locked, and `mac` is left as it was. Writes the 32-byte MAC into `mac` and returns true
    /// otherwise.
    public func derivedMAC(label: String, _ message: UnsafeRawBufferPointer, into mac: UnsafeMutableRawBufferPointer) -> Bool {
        // Read in place: binding `state.keys` to a constant would copy (and count references to) every key.
        let key: HMACKey? = state.withLock { state in
            if let cached = state.keys?.derived.first(where: { $0.label.hasSameUTF8(as: label) }) { return cached.key }
            guard let purposeBase = state.keys?.purposeBase else { return nil }
            let key = HMACKey(Digest.hkdfExpand(pseudoRandomKey: purposeBase, info: Array(label.utf8)))
            state.keys?.derived.append((label, key))
            return key
        }
        guard let key else { return false }
        key.mac(message, into: mac)
        return true
    }

    /// The key backups are sealed under: `SealedBackup.backupKey(masterKey:)` of the master key
    /// the keys were loaded under. `interactionNotAllowed` while locked.
    func backupKey() throws -> SecretBytes {
        try state.withLock { state in
            guard let keys = state.keys else { throw Self.lockedError }
            return Digest.hkdfExpand(pseudoRandomKey: keys.purposeBase, info: SealedBackup.keyLabel)
        }
    }

    // MARK: Creating, locking and unlocking

    /// Writes a new keyring (term 1 and the key check value) into an empty database.
    /// `KeychainError.duplicateItem` when the database has a keyring already (another node wrote it).
    package static func create(
        storage: any KeyringStorage, masterKey: SecretBytes, source: MasterKeySource,
        threshold: UInt64 = defaultRotationThreshold, logger: Logger
    ) throws -> Keyring {
        let (dataKey, check, wrapped) = try firstTerm(masterKey: masterKey)
        guard try storage.create(checkValue: check, firstWrappedKey: wrapped) else {
            throw KeychainError(.duplicateItem, "the database holds a keyring already")
        }
        let keys = Keys(
            terms: [1: Term(key: dataKey, cipher: try AESGCM(key: dataKey))],
            purposeBase: Digest.hkdfExtract(key: masterKey))
        let state = State(keys: keys, termNumbers: [1], current: 1, currentEncryptions: 0, checkValue: check)
        return Keyring(state: state, storage: storage, source: source, threshold: threshold, logger: logger)
    }

    /// A new keyring's first data key, its key check value and the key wrapped under `masterKey`.
    package static func firstTerm(masterKey: SecretBytes) throws -> (dataKey: SecretBytes, checkValue: [UInt8], wrappedKey: [UInt8]) {
        let dataKey = try SecureRandom.key()
        return (dataKey, checkValue(masterKey), try wrap(dataKey, term: 1, kek: AESGCM(key: masterKey)))
    }

    /// The keyring of an existing database, locked: it knows its terms but holds no key.
    /// `KeychainError.decode` when the keyring is empty.
    package static func locked(
        storage: any KeyringStorage, source: MasterKeySource, threshold: UInt64 = defaultRotationThreshold,
        logger: Logger
    ) throws -> Keyring {
        let terms = try storage.load().terms
        guard let last = terms.last else { throw KeychainError.decode("the keyring holds no data key") }
        let state = State(keys: nil, termNumbers: terms.map(\.term), current: last.term, currentEncryptions: last.encryptions)
        return Keyring(state: state, storage: storage, source: source, threshold: threshold, logger: logger)
    }

    /// Loads the keyring with `masterKey`: `KeychainError.authFailed` when the key check value
    /// says the master key is not this vault's, `KeychainError.decode` when the keyring is damaged.
    package static func unlock(
        storage: any KeyringStorage, masterKey: SecretBytes, source: MasterKeySource,
        threshold: UInt64 = defaultRotationThreshold, logger: Logger
    ) throws -> Keyring {
        let keyring = try locked(storage: storage, source: source, threshold: threshold, logger: logger)
        try keyring.unlock(masterKey: masterKey)
        return keyring
    }

    /// Loads every data key with `masterKey` (which it does not keep), waiting for nothing but a
    /// concurrent `lock()`.
    /// `authFailed` (and still locked) when `masterKey` does not match the key check value,
    /// `decode` when a wrapped key fails authentication. A no-op when already unlocked.
    package func unlock(masterKey: SecretBytes) throws {
        try gate.withWriteLock {
            if !isLocked { return }
            let kek = try AESGCM(key: masterKey)
            let stored = try storage.load()
            let rows = stored.terms
            guard let check = stored.checkValue else { throw KeychainError.decode("the keyring has no key check value") }
            guard constantTimeEqual(check, Self.checkValue(masterKey)) else {
                throw KeychainError.authFailed("the master key does not open this keyring")
            }
            guard let last = rows.last else { throw KeychainError.decode("the keyring holds no data key") }
            var terms: [UInt32: Term] = [:]
            for row in rows {
                do {
                    let key = try Self.unwrap(row.wrappedKey, term: row.term, kek: kek)
                    terms[row.term] = Term(key: key, cipher: try AESGCM(key: key))
                } catch {
                    logger.error("keyring term fails authentication", metadata: ["term": "\(row.term)"])
                    throw KeychainError.decode("keyring term \(row.term) is damaged")
                }
            }
            state.withLock { state in
                // The in-memory count never goes down (it may only over-count).
                let encryptions =
                    state.current == last.term ? max(state.currentEncryptions, last.encryptions) : last.encryptions
                state = State(
                    keys: Keys(terms: terms, purposeBase: Digest.hkdfExtract(key: masterKey)),
                    termNumbers: rows.map(\.term), current: last.term, currentEncryptions: encryptions, checkValue: check)
            }
        }
    }

    /// Drops every data key and derived key. Waits until no operation is using a key; when it
    /// returns the keyring holds no reference to key material (`SecretBytes` wipes on release,
    /// the cipher contexts are cleansed when freed). Idempotent.
    public func lock() {
        gate.withWriteLock {
            let released = state.withLock { state -> Keys? in
                defer { state.keys = nil }
                return state.keys
            }
            if released != nil { logger.notice("keyring locked: keys dropped from memory") }
        }
    }

    /// Runs `body` while the keys stay in memory (`lock()` waits for it);
    /// `KeychainError.interactionNotAllowed` when locked. Not re-entrant: take it once per operation.
    package func withKeys<T>(_ body: () throws -> T) throws -> T {
        try gate.withReadLock {
            guard !isLocked else { throw Self.lockedError }
            return try body()
        }
    }

    static let lockedError = KeychainError.interactionNotAllowed("the vault is locked; an admin must unlock it")

    package static func checkValue(_ masterKey: SecretBytes) -> [UInt8] { Digest.hmacSHA256(key: masterKey, checkLabel) }

    // MARK: Opening

    /// Opens a sealed secret bound to `binding`. Altered, moved or foreign boxes fail with
    /// `KeychainError.decode` and are logged (without secret material).
    package func open(_ box: [UInt8], binding: SealBinding) throws -> SecretBytes {
        do {
            let (_, term) = try SealedBox.header(of: box)
            guard let cipher = try cipher(term: term) ?? cipherOfNewerTerm(term) else {
                throw CryptoError.invalidInput("unknown keyring term \(term)")
            }
            return try SealedBox.open(box, cipher: cipher, binding: binding)
        } catch let error as CryptoError {
            var metadata = binding.logMetadata.mapValues { Logger.MetadataValue.string($0) }
            metadata["reason"] = "\(error)"
            logger.error("stored secret fails to open", metadata: metadata)
            throw error.keychainError
        }
    }

    /// A term newer than this keyring knows was started by another node: reads the keyring again.
    private func cipherOfNewerTerm(_ term: UInt32) throws -> AESGCM? {
        guard term > (terms.last ?? 0) else { return nil }
        try refreshTerms()
        return try cipher(term: term)
    }

    /// The cipher of a term's data key, nil when the keyring has no such term;
    /// `interactionNotAllowed` while locked. `lock()` releases it.
    func cipher(term: UInt32) throws -> AESGCM? {
        try state.withLock { state in
            // Read in place: binding `state.keys` to a name copied it, a retain of every key.
            if case .none = state.keys { throw Self.lockedError }
            return state.keys?.terms[term]?.cipher
        }
    }
}
