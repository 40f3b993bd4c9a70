import KeychainConcurrency
public import KeychainCore
import Logging

/// Terms: starting one (rotation, or the threshold reached), learning those another node started,
/// re-wrapping every term under a new master key, and retiring terms that seal nothing any more.
extension Keyring {
    /// Starts a new term now; later secrets are sealed under it. Returns its number.
    /// Reads the master key file again to wrap the new data key: `authFailed` when it no longer
    /// opens this keyring, the file's own error when it cannot be read; `interactionNotAllowed`
    /// when locked.
    @discardableResult
    public func rotate() throws -> UInt32 {
        try StoreErrors.map {
            try withKeys {
                try renewal.withLock { _ in try startTermAlone(kek: keyEncryptionKeyHoldingRenewal()) }
            }
        }
    }

    /// The master key, read again from its source and checked against the key check value, as
    /// a cipher to wrap data keys with; the key bytes themselves are released when it returns.
    func readKeyEncryptionKey() throws -> AESGCM {
        guard let check = state.withLock({ $0.checkValue }) else { throw Self.lockedError }
        for candidate in try masterKeySource.candidates() where constantTimeEqual(Self.checkValue(candidate), check) {
            return try AESGCM(key: candidate)
        }
        logger.error("the master key file no longer opens this keyring; no new term was started")
        throw KeychainError.authFailed(
            "the master key file no longer opens this vault's keyring (was it replaced?); no new term was started")
    }

    /// `readKeyEncryptionKey()` for a caller holding `renewal`. With several nodes, a key file that
    /// no longer matches may be the new key of a rekey made on another node, copied here: then the
    /// keyring is read again under it first.
    func keyEncryptionKeyHoldingRenewal() throws -> AESGCM {
        do {
            return try readKeyEncryptionKey()
        } catch let error as KeychainError where error.code == .authFailed && storage is any SharedKeyringStorage {
            try refreshTermsHoldingRenewal()
            return try readKeyEncryptionKey()
        }
    }

    /// The number the next term takes.
    func nextTermNumber() throws -> UInt32 {
        try state.withLock { state in
            guard state.keys != nil else { throw Self.lockedError }
            return (state.termNumbers.last ?? state.current) + 1
        }
    }

    /// Makes a term just written current, with its data key.
    func adopt(term: UInt32, dataKey: SecretBytes) throws {
        let cipher = try AESGCM(key: dataKey)
        state.withLock { state in
            state.keys?.terms[term] = Term(key: dataKey, cipher: cipher)
            state.termNumbers.append(term)
            state.current = term
            state.currentEncryptions = 0
            state.leaseRemaining = 0
        }
        logger.info("keyring started a new term", metadata: ["term": "\(term)"])
    }

    /// Writes a new term in a transaction of its own (`KeyringStorage.addTerm`) and makes it
    /// current. When another node took the number or rekeyed meanwhile, reads the keyring again
    /// and tries the next number. Call holding `renewal`.
    func startTermAlone(kek: AESGCM) throws -> UInt32 {
        for _ in 0..<8 {
            let next = try nextTermNumber()
            guard let check = state.withLock({ $0.checkValue }) else { throw Self.lockedError }
            let dataKey = try SecureRandom.key()
            if try storage.addTerm(next, wrappedKey: Self.wrap(dataKey, term: next, kek: kek), checkValue: check) {
                try adopt(term: next, dataKey: dataKey)
                return next
            }
            try refreshTermsHoldingRenewal()
        }
        throw KeychainError(.io, "no new keyring term could be written; the keyring keeps changing")
    }

    // MARK: Learning what other nodes did

    /// Reads the stored keyring again and takes in what other nodes changed: terms they started
    /// (unwrapped with the master key read again from its source), the newest term as current,
    /// terms they retired, and a new master key after a rekey elsewhere (then the keys for other
    /// purposes follow it, as on the node that rekeyed). `authFailed` when this node's master key
    /// file does not open the stored keyring (after a rekey elsewhere, until the new file is
    /// copied here); the keys already in memory keep working meanwhile.
    public func refreshTerms() throws {
        try StoreErrors.map { try renewal.withLock { _ in try refreshTermsHoldingRenewal() } }
    }

    func refreshTermsHoldingRenewal() throws {
        let stored = try storage.load()
        guard let check = stored.checkValue, let newest = stored.terms.last else {
            throw KeychainError.decode("the keyring holds no data key")
        }
        let (known, ownCheck) = try state.withLock { state -> (Set<UInt32>, [UInt8]?) in
            guard let keys = state.keys else { throw Self.lockedError }
            return (Set(keys.terms.keys), state.checkValue)
        }
        let rekeyed = ownCheck.map { !constantTimeEqual($0, check) } ?? true
        let unknown = stored.terms.filter { !known.contains($0.term) }
        var opened: [UInt32: Term] = [:]
        var purposeBase: SecretBytes?
        if rekeyed || !unknown.isEmpty {
            guard let masterKey = try masterKeySource.candidates().first(where: { constantTimeEqual(Self.checkValue($0), check) })
            else {
                logger.error("this node's master key file does not open the stored keyring (rekeyed on another node?)")
                throw KeychainError.authFailed(
                    "this node's master key file does not open the vault's keyring: after a rekey on another node, "
                        + "copy that node's master.key here")
            }
            let kek = try AESGCM(key: masterKey)
            for row in unknown {
                let key = try Self.unwrap(row.wrappedKey, term: row.term, kek: kek)
                opened[row.term] = Term(key: key, cipher: try AESGCM(key: key))
            }
            if rekeyed { purposeBase = Digest.hkdfExtract(key: masterKey) }
        }
        let storedTerms = Set(stored.terms.map(\.term))
        state.withLock { state in
            for (term, opened) in opened { state.keys?.terms[term] = opened }
            for term in state.termNumbers where !storedTerms.contains(term) { state.keys?.terms[term] = nil }
            state.termNumbers = stored.terms.map(\.term)
            if state.current != newest.term {
                state.current = newest.term
                state.leaseRemaining = 0
                state.currentEncryptions = newest.encryptions
            }
            if let purposeBase {
                state.keys?.purposeBase = purposeBase
                state.keys?.derived = []
                state.checkValue = check
            }
        }
        if !unknown.isEmpty || rekeyed {
            logger.info(
                "keyring read again", metadata: ["newTerms": "\(unknown.map(\.term))", "rekeyed": "\(rekeyed)"])
        }
    }

    // MARK: Rewrapping

    /// Re-wraps every data key (and the key check value) under `newMasterKey`, in one
    /// transaction. Secrets are not re-sealed: their data keys do not change. After it returns,
    /// the vault must be opened with the new master key (write it with `MasterKeyFile.write`).
    /// Prefer `Vault.rekey()`, which also replaces the key file crash-safely.
    public func rewrap(under newMasterKey: SecretBytes) throws {
        _ = try StoreErrors.map { try withKeys { try rewrapHoldingKeys(under: newMasterKey) } }
    }

    /// `rewrap(under:)` for a caller already inside `withKeys`; returns how many keys it re-wrapped.
    /// Every stored term is re-wrapped: one another node started and this one has not loaded yet
    /// is loaded first (`refreshTerms()`), and the rewrap tried again.
    @discardableResult
    func rewrapHoldingKeys(under newMasterKey: SecretBytes) throws -> Int {
        let newKEK = try AESGCM(key: newMasterKey)
        let check = Self.checkValue(newMasterKey)
        var count = 0
        for attempt in 0..<4 {
            do {
                try storage.rewrap { stored in
                    let keys = try state.withLock { state in
                        guard let keys = state.keys else { throw Self.lockedError }
                        return keys.terms.mapValues(\.key)
                    }
                    let wrapped = try stored.terms.map { row in
                        guard let key = keys[row.term] else { throw KeyringChanged() }
                        return (term: row.term, wrappedKey: try Self.wrap(key, term: row.term, kek: newKEK))
                    }
                    count = wrapped.count
                    return KeyringRewrap(terms: wrapped, checkValue: check)
                }
                break
            } catch is KeyringChanged where attempt < 3 {
                try refreshTerms()
            }
        }
        // The keys for other purposes follow the master key: the audit and backup keys change.
        let purposeBase = Digest.hkdfExtract(key: newMasterKey)
        state.withLock { state in
            state.keys?.purposeBase = purposeBase
            state.keys?.derived = []
            state.checkValue = check
        }
        logger.info("keyring rewrapped under a new master key", metadata: ["terms": "\(count)"])
        return count
    }
    // MARK: Retiring terms

    /// Forgets the data keys of `retired` terms (their rows were deleted by the caller's
    /// committed transaction, because no secret is sealed under them any more); the keys are
    /// wiped once no operation holds them. The current term is never retired.
    package func forget(retiredTerms retired: [UInt32]) {
        state.withLock { state in
            for term in retired where term != state.current {
                state.keys?.terms[term] = nil
                state.termNumbers.removeAll { $0 == term }
            }
        }
        if !retired.isEmpty { logger.notice("keyring retired terms", metadata: ["terms": "\(retired)"]) }
    }
}
