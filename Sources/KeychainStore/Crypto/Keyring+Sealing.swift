import KeychainConcurrency
package import KeychainCore

/// Sealing secrets under the current term, counted so that no term seals more than
/// `rotationThreshold`. One node (SQLite) counts in the write transaction that stores the secrets
/// (`seal(_:binding:on:)`); several nodes (PostgreSQL) count against blocks of encryptions each
/// node reserves ahead from their shared storage (`seal(_:binding:reservingFrom:)`).
///
/// A backend with one writer runs each write transaction that may seal as: note `newestTerm`,
/// run the transaction, and on its rollback `forgetTerms(after:)` that term.
extension Keyring {
    // MARK: One writer: counted in the write transaction

    /// The newest term, for `forgetTerms(after:)` when the transaction that may start terms
    /// after it rolls back.
    package var newestTerm: UInt32 { state.withLock { $0.termNumbers.last ?? $0.current } }

    /// Drops the terms after `term`, started by a transaction that rolled back (no secret sealed
    /// under them was stored). `term` is current again, counted as full, so that the next secret
    /// starts a new term once more: the count may only over-count.
    package func forgetTerms(after term: UInt32) {
        state.withLock { state in
            guard state.current > term else { return }
            for dropped in state.termNumbers where dropped > term { state.keys?.terms[dropped] = nil }
            state.termNumbers.removeAll { $0 > term }
            state.current = term
            state.currentEncryptions = max(state.currentEncryptions, rotationThreshold)
        }
    }

    /// Starts a new term first when sealing `count` more secrets would pass the threshold. Call
    /// inside the write transaction `db`, before sealing them.
    package func prepareForSealing(_ count: Int, on db: some KeyringWriteTransaction) throws {
        guard count > 0 else { return }
        let needsTerm = state.withLock { $0.currentEncryptions + UInt64(count) > rotationThreshold }
        if needsTerm { try startTerm(on: db, kek: readKeyEncryptionKey()) }
    }

    /// Seals `secret` under the current term; call inside the write transaction on `db`, which
    /// also persists the term's encryption count.
    package func seal(_ secret: SecretBytes, binding: SealBinding, on db: some KeyringWriteTransaction) throws -> [UInt8] {
        let (term, cipher, count) = try state.withLock { state -> (UInt32, AESGCM, UInt64) in
            guard let cipher = state.keys?.terms[state.current]?.cipher else { throw Self.lockedError }
            state.currentEncryptions += 1
            return (state.current, cipher, state.currentEncryptions)
        }
        let box = try SealedBox.seal(secret, term: term, cipher: cipher, binding: binding)
        try db.recordEncryptions(count, term: term)
        return box
    }

    /// Writes a new term in the write transaction open on `db` and makes it current.
    private func startTerm(on db: some KeyringWriteTransaction, kek: AESGCM) throws {
        let next = try nextTermNumber()
        let dataKey = try SecureRandom.key()
        try db.insertTerm(next, wrappedKey: Self.wrap(dataKey, term: next, kek: kek))
        try adopt(term: next, dataKey: dataKey)
    }

    // MARK: Several writers: counted in reserved blocks

    /// Seals `secret` under the current term, taking one of the encryptions this node reserved
    /// (`SharedKeyringStorage.reserveEncryptions`, in blocks of `leaseSize`); reserves the next block
    /// when none is left, and starts a new term when the count over every node reaches the
    /// threshold. A node that stops leaves its unused reservation counted: the count may only
    /// over-count. Needs no transaction: the reservation is committed before the secret is sealed.
    package func seal(
        _ secret: SecretBytes, binding: SealBinding, reservingFrom storage: some SharedKeyringStorage
    ) throws -> [UInt8] {
        for _ in 0..<8 {
            let taken = try state.withLock { state -> (UInt32, AESGCM)? in
                guard let cipher = state.keys?.terms[state.current]?.cipher else { throw Self.lockedError }
                guard state.leaseRemaining > 0 else { return nil }
                state.leaseRemaining -= 1
                return (state.current, cipher)
            }
            if let (term, cipher) = taken { return try SealedBox.seal(secret, term: term, cipher: cipher, binding: binding) }
            try reserveEncryptions(from: storage)
        }
        throw KeychainError(.io, "no keyring term could be reserved to seal under; the keyring keeps changing")
    }

    /// Reserves the next block of encryptions of the current term, or starts a new term when the
    /// term is full. One thread at a time; one that waited finds the block its predecessor reserved.
    private func reserveEncryptions(from storage: some SharedKeyringStorage) throws {
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

/// The open write transaction a keyring with one writer counts its encryptions in, and writes
/// the terms it starts in, so that they commit or roll back with the secrets sealed under them.
package protocol KeyringWriteTransaction {
    func recordEncryptions(_ count: UInt64, term: UInt32) throws
    func insertTerm(_ term: UInt32, wrappedKey: [UInt8]) throws
}
