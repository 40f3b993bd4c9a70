import KeychainStore

/// The keyring's one-writer sealing on SQLite: the writer connection's transaction is the one
/// that counts encryptions and stores new terms (`KeyringTable`).
extension Keyring {
    /// Runs `body` in a write transaction on `db` (the writer connection) in which secrets may be
    /// sealed: a term `prepareForSealing` starts in it is committed with the secrets sealed under
    /// it, and forgotten again when the transaction rolls back. The terms' encryption counts are
    /// written once, just before the commit, with the sealed values they count (a write sealing
    /// three values, or a batch of a hundred, updates the keyring row once, not per seal).
    func transaction<T>(on db: SQLiteConnection, _ body: () throws -> T) throws -> T {
        let newest = newestTerm
        do {
            return try db.transaction {
                db.pendingEncryptions = [:]
                defer { db.pendingEncryptions = nil }
                let result = try body()
                for (term, count) in db.pendingEncryptions ?? [:] {
                    try KeyringTable.recordEncryptions(count, term: term, on: db)
                }
                return result
            }
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
        let newest = newestTerm
        let failure = try db.savepoint(body)
        if failure != nil { forgetTerms(after: newest) }
        return failure
    }
}

extension SQLiteConnection: KeyringWriteTransaction {
    /// Inside `Keyring.transaction(on:)`, kept until the transaction is about to commit (counts
    /// only grow: the largest is written, and one larger than the values committed is safe);
    /// elsewhere written at once.
    func recordEncryptions(_ count: UInt64, term: UInt32) throws {
        guard var pending = pendingEncryptions else { return try KeyringTable.recordEncryptions(count, term: term, on: self) }
        pending[term] = max(pending[term] ?? 0, count)
        pendingEncryptions = pending
    }

    func insertTerm(_ term: UInt32, wrappedKey: [UInt8]) throws {
        try KeyringTable.insertTerm(term, wrappedKey: wrappedKey, on: self)
    }
}
