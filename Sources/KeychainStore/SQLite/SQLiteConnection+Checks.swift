extension SQLiteConnection {
    /// What `PRAGMA integrity_check` reports: `["ok"]` for a sound database.
    func integrityCheck() throws -> [String] {
        try query("PRAGMA integrity_check") { $0.text(0) }
    }

    /// The names of the database's tables.
    func tableNames() throws -> Set<String> {
        Set(try query("SELECT name FROM sqlite_master WHERE type = 'table'") { $0.text(0) })
    }

    /// Copies the whole WAL into the database and empties it (`wal_checkpoint(TRUNCATE)`), so the
    /// database file alone is whole; errors are ignored (the WAL then stays beside it).
    func checkpointQuietly() {
        _ = try? query("PRAGMA wal_checkpoint(TRUNCATE)") { _ in () }
    }
}
