import KeychainStore

/// The keyring's one-writer sealing on SQLite: the writer connection's transaction is the one
/// that counts encryptions and stores new terms (`KeyringTable`).
extension Keyring {
    /// Runs `body` in a write transaction on `db` (the writer connection) in which secrets may be
    /// sealed: a term `prepareForSealing` starts in it is committed with the secrets sealed under
    /// it, and forgotten again when the transaction rolls back.
    func transaction<T>(on db: SQLiteConnection, _ body: () throws -> T) throws -> T {
        let newest = newestTerm
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
        let newest = newestTerm
        let failure = try db.savepoint(body)
        if failure != nil { forgetTerms(after: newest) }
        return failure
    }
}

extension SQLiteConnection: KeyringWriteTransaction {
    func recordEncryptions(_ count: UInt64, term: UInt32) throws {
        try KeyringTable.recordEncryptions(count, term: term, on: self)
    }

    func insertTerm(_ term: UInt32, wrappedKey: [UInt8]) throws {
        try KeyringTable.insertTerm(term, wrappedKey: wrappedKey, on: self)
    }
}
