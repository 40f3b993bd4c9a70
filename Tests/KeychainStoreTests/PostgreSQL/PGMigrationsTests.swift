import Foundation
import KeychainCore
import Synchronization
import Testing
@testable import KeychainStore
@testable import KeychainPostgreSQL

@Suite("PostgreSQL migrations")
struct PGMigrationsTests {
    @Test func nodesStartingAtOnceMigrateOnceAndAllSeeTheSchema() throws {
        let database = try PGTestDatabase()
        let applied = Mutex<[Int]>([])
        let failures = Mutex<[String]>([])
        let threads = (0..<4).map { _ in
            Thread {
                do {
                    let count = try PGMigrations.apply(on: try database.connect())
                    applied.withLock { $0.append(count) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        threads.forEach { $0.start() }
        while applied.withLock({ $0.count }) + failures.withLock({ $0.count }) < threads.count { usleep(2_000) }
        #expect(failures.withLock { $0 } == [])
        #expect(applied.withLock { $0.sorted() } == [0, 0, 0, PGMigrations.all.count])
        let db = try database.connect()
        #expect(try db.execute("SELECT max(version) FROM schema_migrations").int64(0, 0) == PGMigrations.latestVersion)
        #expect(try PGMigrations.apply(on: db) == 0)
    }

    @Test func thePrimaryKeyIncludesTheGroupAndAbsentValuesCollideAsDefaults() throws {
        let db = try PGTestDatabase().connect()
        try PGMigrations.apply(on: db)
        func add(_ ref: String, group: String?, account: String?) throws {
            try db.execute(
                "INSERT INTO items (class, persistent_ref, \"accessGroup\", \"account\", \"service\") VALUES ('genp', $1, $2, $3, 's')",
                [.text(ref), group.map(PGValue.text) ?? .null, account.map(PGValue.text) ?? .null])
        }
        try add("r1", group: "g1", account: "a")
        try add("r2", group: "g2", account: "a")  // the same key in another group
        let clash = #expect(throws: PostgreSQLError.self) { try add("r3", group: "g1", account: "a") }
        #expect(clash?.constraint == ItemColumns.primaryKeyIndexName(.genericPassword))
        try add("r4", group: "g1", account: nil)
        // An absent account is the empty string's, as on SQLite and Apple.
        #expect(throws: PostgreSQLError.self) { try add("r5", group: "g1", account: "") }
    }

    @Test func aDatabaseNewerThanThisBuildIsRefused() throws {
        let db = try PGTestDatabase().connect()
        try PGMigrations.apply(on: db)
        try db.execute("INSERT INTO schema_migrations (version) VALUES ($1)", [.int8(PGMigrations.latestVersion + 1)])
        #expect(throws: NewerSchemaError.self) { try PGMigrations.apply(on: db) }
    }
}
