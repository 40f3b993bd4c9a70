import KeychainStore

extension SQLiteConnection {
    /// What `PRAGMA integrity_check` reports: `["ok"]` for a sound database.
    func integrityCheck() throws -> [String] {
        try query("PRAGMA integrity_check") { $0.text(0) }
    }

    /// Every object of the database's schema: tables, indexes (SQLite's own too), triggers, views.
    func schemaObjects() throws -> Set<SchemaObject> {
        Set(try query("SELECT type, name, tbl_name, ifnull(sql, '') FROM sqlite_schema") {
            SchemaObject(
                type: $0.text(0), name: $0.text(1), table: $0.text(2),
                // Runs of white space as one space: a migration's layout may change, its SQL not.
                sql: $0.text(3).split(whereSeparator: \.isWhitespace).joined(separator: " "))
        })
    }

    /// Copies the whole WAL into the database and empties it (`wal_checkpoint(TRUNCATE)`), so the
    /// database file alone is whole; errors are ignored (the WAL then stays beside it).
    func checkpointQuietly() {
        _ = try? query("PRAGMA wal_checkpoint(TRUNCATE)") { _ in () }
    }
}

/// One row of `sqlite_schema`, compared whole: the same name with other SQL is another object.
struct SchemaObject: Hashable, Comparable, CustomStringConvertible {
    let type: String
    let name: String
    let table: String
    let sql: String

    static func < (a: SchemaObject, b: SchemaObject) -> Bool { (a.type, a.name, a.sql) < (b.type, b.name, b.sql) }

    var description: String { "\(type) \(name) on \(table)" }
}
