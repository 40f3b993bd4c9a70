import KeychainStore

/// Numbered schema migrations, applied at open by `PRAGMA user_version`, each in its own
/// transaction (the version is bumped inside it, so a crash leaves the old version or the new).
enum Migrations {
    static let all: [(version: Int64, script: String)] = [
        (1, version1),
        (2, version2),
        (3, version3),
        (4, version4),
        (5, version5),
        (6, version6),
        (7, version7),
        (8, version8),
        (9, version9),
        (10, version10),
        (11, version11),
    ]

    static var latestVersion: Int64 { all.last?.version ?? 0 }

    /// The schema version of the database on `connection` (0: none yet).
    static func version(of connection: SQLiteConnection) throws -> Int64 {
        try connection.scalarInt("PRAGMA user_version") ?? 0
    }

    /// Applies the migrations the database lacks. Throws when the database is newer than this build.
    static func apply(on connection: SQLiteConnection) throws {
        let current = try version(of: connection)
        if current > latestVersion {
            throw NewerSchemaError(found: current, known: latestVersion)
        }
        for migration in all where migration.version > current {
            try connection.transaction {
                try connection.executeScript(migration.script)
                try connection.executeScript("PRAGMA user_version = \(migration.version)")
            }
        }
    }

    /// The schema objects a database at `version` has when only these migrations made it: the
    /// migrations up to `version` applied to an empty in-memory database.
    static func schemaObjects(atVersion version: Int64) throws -> Set<SchemaObject> {
        let reference = try SQLiteConnection(path: ":memory:")
        defer { reference.close() }
        for migration in all where migration.version <= version {
            try reference.transaction { try reference.executeScript(migration.script) }
        }
        return try reference.schemaObjects()
    }
}
