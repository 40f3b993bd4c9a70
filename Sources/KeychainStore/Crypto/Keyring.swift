import Foundation
import KeychainConcurrency
public import KeychainCore
import Logging
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
/// The key logic only: the rows are read and written by `KeyringTable`.
public final class Keyring: Sendable {
    public static let defaultRotationThreshold: UInt64 = UInt64(0.9 * 4_294_967_296.0)
    static let checkLabel = Array("keychaind keyring check value v1".utf8)

    private struct Term {
        let key: SecretBytes
        let cipher: AESGCM
    }

    /// Everything secret. Absent while locked.
    private struct Keys {
        var terms: [UInt32: Term]
        /// HKDF-Extract(master key): each key for another purpose is an HKDF-Expand of it with its
        /// label (`derivedMAC`, `backupKey()`). It opens no data key. A rekey replaces it.
        var purposeBase: SecretBytes
        /// Keys derived for other purposes (`derivedMAC`), prepared for HMAC, by label.
        var derived: [String: HMACKey] = [:]
    }

    private struct State {
        var keys: Keys?
        var termNumbers: [UInt32]
        var current: UInt32
        var currentEncryptions: UInt64
        /// The key check value the keys were loaded under (not secret): a master key read again
        /// must match it.
        var checkValue: [UInt8]? = nil
    }

    private let state: PThreadLocked<State>
    /// Held shared by every operation that uses a key (`withKeys`), exclusively by `lock()` and
    /// `unlock(masterKey:)`: when `lock()` returns, no operation holds a key any more.
    private let gate = ReadersWriterLock()
    private let table: KeyringTable
    private let masterKeySource: MasterKeySource
    private let logger: Logger
    public let rotationThreshold: UInt64

    private init(state: State, pool: ConnectionPool, source: MasterKeySource, threshold: UInt64, logger: Logger) {
        self.state = PThreadLocked(state)
        self.table = KeyringTable(pool: pool)
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
        let key: HMACKey? = state.withLock { state in
            guard let keys = state.keys else { return nil }
            if let cached = keys.derived[label] { return cached }
            let key = HMACKey(Digest.hkdfExpand(pseudoRandomKey: keys.purposeBase, info: Array(label.utf8)))
            state.keys?.derived[label] = key
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
    static func create(
        pool: ConnectionPool, masterKey: SecretBytes, source: MasterKeySource,
        threshold: UInt64 = defaultRotationThreshold, logger: Logger
    ) throws -> Keyring {
        let kek = try AESGCM(key: masterKey)
        let dataKey = try SecureRandom.key()
        let check = checkValue(masterKey)
        try KeyringTable(pool: pool).create(checkValue: check, firstWrappedKey: wrap(dataKey, term: 1, kek: kek))
        let keys = Keys(
            terms: [1: Term(key: dataKey, cipher: try AESGCM(key: dataKey))],
            purposeBase: Digest.hkdfExtract(key: masterKey))
        let state = State(keys: keys, termNumbers: [1], current: 1, currentEncryptions: 0, checkValue: check)
        return Keyring(state: state, pool: pool, source: source, threshold: threshold, logger: logger)
    }

    /// The keyring of an existing database, locked: it knows its terms but holds no key.
    /// `KeychainError.decode` when the keyring is empty.
    static func locked(
        pool: ConnectionPool, source: MasterKeySource, threshold: UInt64 = defaultRotationThreshold, logger: Logger
    ) throws -> Keyring {
        let rows = try KeyringTable(pool: pool).termCounts()
        guard let last = rows.last else { throw KeychainError.decode("the keyring holds no data key") }
        let state = State(keys: nil, termNumbers: rows.map(\.term), current: last.term, currentEncryptions: last.encryptions)
        return Keyring(state: state, pool: pool, source: source, threshold: threshold, logger: logger)
    }

    /// Loads the keyring with `masterKey`: `KeychainError.authFailed` when the key check value
    /// says the master key is not this vault's, `KeychainError.decode` when the keyring is damaged.
    static func unlock(
        pool: ConnectionPool, masterKey: SecretBytes, source: MasterKeySource,
        threshold: UInt64 = defaultRotationThreshold, logger: Logger
    ) throws -> Keyring {
        let keyring = try locked(pool: pool, source: source, threshold: threshold, logger: logger)
        try keyring.unlock(masterKey: masterKey)
        return keyring
    }

    /// Loads every data key with `masterKey` (which it does not keep), waiting for nothing but a
    /// concurrent `lock()`.
    /// `authFailed` (and still locked) when `masterKey` does not match the key check value,
    /// `decode` when a wrapped key fails authentication. A no-op when already unlocked.
    func unlock(masterKey: SecretBytes) throws {
        try gate.withWriteLock {
            if !isLocked { return }
            let kek = try AESGCM(key: masterKey)
            let (check, rows) = try table.load()
            guard let check else { throw KeychainError.decode("the keyring has no key check value") }
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
    func withKeys<T>(_ body: () throws -> T) throws -> T {
        try gate.withReadLock {
            guard !isLocked else { throw Self.lockedError }
            return try body()
        }
    }

    static let lockedError = KeychainError.interactionNotAllowed("the vault is locked; an admin must unlock it")

    static func checkValue(_ masterKey: SecretBytes) -> [UInt8] { Digest.hmacSHA256(key: masterKey, checkLabel) }

    // MARK: Sealing and opening

    /// Runs `body` in a write transaction on `db` (the writer connection) in which secrets may be
    /// sealed: a term `prepareForSealing` starts in it is committed with the secrets sealed under
    /// it, and forgotten again when the transaction rolls back.
    func transaction<T>(on db: SQLiteConnection, _ body: () throws -> T) throws -> T {
        let newest = state.withLock { $0.termNumbers.last ?? $0.current }
        do {
            return try db.transaction(body)
        } catch {
            forgetTerms(after: newest)
            throw error
        }
    }

    /// One write of a group commit, inside `transaction(on:)`: runs `body` in a savepoint on `db`
    /// and returns its error (the savepoint rolled back, and a term started in it is forgotten as
    /// a rolled-back transaction's is), nil when it succeeded. Throws when the savepoint itself
    /// fails, which dooms the transaction.
    func savepoint(on db: SQLiteConnection, _ body: () throws -> Void) throws -> (any Error)? {
        let newest = state.withLock { $0.termNumbers.last ?? $0.current }
        let failure = try db.savepoint(body)
        if failure != nil { forgetTerms(after: newest) }
        return failure
    }

    /// Drops the terms after `term`, started by a transaction that rolled back (no secret sealed
    /// under them was stored). `term` is current again, counted as full, so that the next secret
    /// starts a new term once more: the count may only over-count.
    private func forgetTerms(after term: UInt32) {
        state.withLock { state in
            guard state.current > term else { return }
            for dropped in state.termNumbers where dropped > term { state.keys?.terms[dropped] = nil }
            state.termNumbers.removeAll { $0 > term }
            state.current = term
            state.currentEncryptions = max(state.currentEncryptions, rotationThreshold)
        }
    }

    /// Starts a new term first when sealing `count` more secrets would pass the threshold. Call
    /// inside `transaction(on:)`, before sealing them.
    func prepareForSealing(_ count: Int, on db: SQLiteConnection) throws {
        guard count > 0 else { return }
        let needsTerm = state.withLock { $0.currentEncryptions + UInt64(count) > rotationThreshold }
        if needsTerm { try startTerm(on: db, kek: readKeyEncryptionKey()) }
    }

    /// Seals `secret` under the current term; call inside the write transaction on `db`, which
    /// also persists the term's encryption count.
    func seal(_ secret: SecretBytes, binding: SealBinding, on db: SQLiteConnection) throws -> [UInt8] {
        let (term, cipher, count) = try state.withLock { state -> (UInt32, AESGCM, UInt64) in
            guard let cipher = state.keys?.terms[state.current]?.cipher else { throw Self.lockedError }
            state.currentEncryptions += 1
            return (state.current, cipher, state.currentEncryptions)
        }
        let box = try SealedBox.seal(secret, term: term, cipher: cipher, binding: binding)
        try KeyringTable.recordEncryptions(count, term: term, on: db)
        return box
    }

    /// Opens a sealed secret bound to `binding`. Altered, moved or foreign boxes fail with
    /// `KeychainError.decode` and are logged (without secret material).
    func open(_ box: [UInt8], binding: SealBinding) throws -> SecretBytes {
        do {
            let (_, term) = try SealedBox.header(of: box)
            guard let cipher = try cipher(term: term) else {
                throw CryptoError.invalidInput("unknown keyring term \(term)")
            }
            return try SealedBox.open(box, cipher: cipher, binding: binding)
        } catch let error as CryptoError {
            logger.error(
                "stored secret fails to open",
                metadata: [
                    "class": "\(binding.itemClass.rawValue)", "persistentRef": "\(binding.persistentRef.rawValue)",
                    "reason": "\(error)",
                ])
            throw error.keychainError
        }
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

    // MARK: Rotation and rewrapping

    /// Starts a new term now; later secrets are sealed under it. Returns its number.
    /// Reads the master key file again to wrap the new data key: `authFailed` when it no longer
    /// opens this keyring, the file's own error when it cannot be read; `interactionNotAllowed`
    /// when locked.
    @discardableResult
    public func rotate() throws -> UInt32 {
        try StoreErrors.map {
            try withKeys {
                let kek = try readKeyEncryptionKey()
                return try table.pool.write { db in try transaction(on: db) { try startTerm(on: db, kek: kek) } }
            }
        }
    }

    /// The master key, read again from its source and checked against the key check value, as
    /// a cipher to wrap data keys with; the key bytes themselves are released when it returns.
    private func readKeyEncryptionKey() throws -> AESGCM {
        guard let check = state.withLock({ $0.checkValue }) else { throw Self.lockedError }
        for candidate in try masterKeySource.candidates() where constantTimeEqual(Self.checkValue(candidate), check) {
            return try AESGCM(key: candidate)
        }
        logger.error("the master key file no longer opens this keyring; no new term was started")
        throw KeychainError.authFailed(
            "the master key file no longer opens this vault's keyring (was it replaced?); no new term was started")
    }

    /// Writes a new term in the write transaction open on `db` and makes it current.
    @discardableResult
    private func startTerm(on db: SQLiteConnection, kek: AESGCM) throws -> UInt32 {
        let next = try state.withLock { state in
            guard state.keys != nil else { throw Self.lockedError }
            return (state.termNumbers.last ?? state.current) + 1
        }
        let dataKey = try SecureRandom.key()
        try KeyringTable.insertTerm(next, wrappedKey: Self.wrap(dataKey, term: next, kek: kek), on: db)
        let cipher = try AESGCM(key: dataKey)
        state.withLock { state in
            state.keys?.terms[next] = Term(key: dataKey, cipher: cipher)
            state.termNumbers.append(next)
            state.current = next
            state.currentEncryptions = 0
        }
        logger.info("keyring started a new term", metadata: ["term": "\(next)"])
        return next
    }

    /// Re-wraps every data key (and the key check value) under `newMasterKey`, in one
    /// transaction. Secrets are not re-sealed: their data keys do not change. After it returns,
    /// the vault must be opened with the new master key (write it with `MasterKeyFile.write`).
    /// Prefer `Vault.rekey()`, which also replaces the key file crash-safely.
    public func rewrap(under newMasterKey: SecretBytes) throws {
        _ = try StoreErrors.map { try withKeys { try rewrapHoldingKeys(under: newMasterKey) } }
    }

    /// `rewrap(under:)` for a caller already inside `withKeys`; returns how many keys it re-wrapped.
    @discardableResult
    func rewrapHoldingKeys(under newMasterKey: SecretBytes) throws -> Int {
        let newKEK = try AESGCM(key: newMasterKey)
        // On the writer throughout, so that no term is started between the snapshot of the terms
        // and the new master key taking over.
        let count = try table.pool.write { db in
            let terms = try state.withLock { state in
                guard let keys = state.keys else { throw Self.lockedError }
                return keys.terms.mapValues(\.key)
            }
            let wrapped = try terms.map { term, key in (term: term, wrappedKey: try Self.wrap(key, term: term, kek: newKEK)) }
            let check = Self.checkValue(newMasterKey)
            try db.transaction { try KeyringTable.rewrap(wrapped, checkValue: check, on: db) }
            // The keys for other purposes follow the master key: the audit and backup keys change.
            let purposeBase = Digest.hkdfExtract(key: newMasterKey)
            state.withLock { state in
                state.keys?.purposeBase = purposeBase
                state.keys?.derived = [:]
                state.checkValue = check
            }
            return terms.count
        }
        logger.info("keyring rewrapped under a new master key", metadata: ["terms": "\(count)"])
        return count
    }

    // MARK: Retiring terms

    /// Forgets the data keys of `retired` terms (their rows were deleted by the caller's
    /// committed transaction, because no secret is sealed under them any more); the keys are
    /// wiped once no operation holds them. The current term is never retired.
    func forget(retiredTerms retired: [UInt32]) {
        state.withLock { state in
            for term in retired where term != state.current {
                state.keys?.terms[term] = nil
                state.termNumbers.removeAll { $0 == term }
            }
        }
        if !retired.isEmpty { logger.notice("keyring retired terms", metadata: ["terms": "\(retired)"]) }
    }
}
