import KeychainStore

/// Numbered schema migrations on PostgreSQL, recorded in `schema_migrations`. Every node runs
/// `apply` when it starts: all of it is one transaction holding a transaction-level advisory
/// lock, so when several nodes start at once one migrates and the others wait for its commit,
/// then find nothing left to do. A node killed half-way leaves the old schema (DDL is
/// transactional in PostgreSQL) and frees the lock with its session.
enum PGMigrations {
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

    /// The advisory lock key every keychaind node takes around migration.
    static let lockName = "keychaind:migrate"

    /// The schema version of the database (0: none yet), once `schema_migrations` exists.
    private static func version(on connection: PGConnection) throws -> Int64 {
        try connection.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").int64(0, 0)
    }

    /// Applies the migrations the database lacks; returns how many. Throws when the database is
    /// newer than this build.
    @discardableResult
    static func apply(on connection: PGConnection) throws -> Int {
        try connection.transaction {
            try connection.execute("SELECT pg_advisory_xact_lock(hashtext($1))", [.text(lockName)])
            try connection.executeScript(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version bigint PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())")
            let current = try version(on: connection)
            if current > latestVersion {
                throw NewerSchemaError(found: current, known: latestVersion)
            }
            let missing = all.filter { $0.version > current }
            for migration in missing {
                try connection.executeScript(migration.script)
                try connection.execute("INSERT INTO schema_migrations (version) VALUES ($1)", [.int8(migration.version)])
            }
            return missing.count
        }
    }
}
