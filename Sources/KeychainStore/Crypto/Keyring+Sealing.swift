import KeychainConcurrency
import KeychainCore

/// Sealing secrets under the current term, counted so that no term seals more than
/// `rotationThreshold`. One node (SQLite) counts in the write transaction that stores the secrets
/// (`seal(_:binding:on:)`); several nodes (PostgreSQL) count against blocks of encryptions each
/// node reserves ahead (`seal(_:binding:)`).
extension Keyring {
    // MARK: One writer: counted in the write transaction

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

    /// Writes a new term in the write transaction open on `db` and makes it current.
    private func startTerm(on db: SQLiteConnection, kek: AESGCM) throws {
        let next = try nextTermNumber()
        let dataKey = try SecureRandom.key()
        try KeyringTable.insertTerm(next, wrappedKey: Self.wrap(dataKey, term: next, kek: kek), on: db)
        try adopt(term: next, dataKey: dataKey)
    }

    // MARK: Several writers: counted in reserved blocks

    /// Seals `secret` under the current term, taking one of the encryptions this node reserved
    /// (`SharedKeyringStorage.reserveEncryptions`, in blocks of `leaseSize`); reserves the next block
    /// when none is left, and starts a new term when the count over every node reaches the
    /// threshold. A node that stops leaves its unused reservation counted: the count may only
    /// over-count. Needs no transaction: the reservation is committed before the secret is sealed.
    func seal(_ secret: SecretBytes, binding: SealBinding) throws -> [UInt8] {
        for _ in 0..<8 {
            let taken = try state.withLock { state -> (UInt32, AESGCM)? in
                guard let cipher = state.keys?.terms[state.current]?.cipher else { throw Self.lockedError }
                guard state.leaseRemaining > 0 else { return nil }
                state.leaseRemaining -= 1
                return (state.current, cipher)
            }
            if let (term, cipher) = taken { return try SealedBox.seal(secret, term: term, cipher: cipher, binding: binding) }
            try reserveEncryptions()
        }
        throw KeychainError(.io, "no keyring term could be reserved to seal under; the keyring keeps changing")
    }

    /// Reserves the next block of encryptions of the current term, or starts a new term when the
    /// term is full. One thread at a time; one that waited finds the block its predecessor reserved.
    private func reserveEncryptions() throws {
        guard let storage = storage as? any SharedKeyringStorage else {
            preconditionFailure("a keyring with one writer counts in its write transactions")
        }
        let leaseSize = storage.leaseSize
        try renewal.withLock { _ in
            let term = try state.withLock { state -> UInt32? in
                guard state.keys != nil else { throw Self.lockedError }
                return state.leaseRemaining > 0 ? nil : state.current
            }
            guard let term else { return }
            guard let total = try storage.reserveEncryptions(leaseSize, term: term) else {
                // Retired by another node: read the keyring again for the current term.
                try refreshTermsHoldingRenewal()
                return
            }
            if total > rotationThreshold {
                _ = try startTermAlone(kek: keyEncryptionKeyHoldingRenewal())
                return
            }
            state.withLock { state in
                guard state.current == term else { return }
                state.leaseRemaining = leaseSize
                state.currentEncryptions = max(state.currentEncryptions, total)
            }
        }
    }
}
