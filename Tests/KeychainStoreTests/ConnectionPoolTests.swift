import Foundation
import Testing

@testable import KeychainStore
@testable import KeychainSQLite

/// The pool's readers keep their snapshot between reads while no write finishes: no read may
/// answer from before an acknowledged write, and kept snapshots must not keep the WAL growing.
@Suite("Connection pool")
struct ConnectionPoolTests {
    private static func pool(in directory: TemporaryDirectory) throws -> ConnectionPool {
        let pool = try ConnectionPool(path: directory.path + "/pool.db")
        try pool.write { try $0.execute("CREATE TABLE box (id INTEGER PRIMARY KEY, value INTEGER, padding BLOB)") }
        try pool.write { try $0.execute("INSERT INTO box (id, value) VALUES (1, 0)") }
        return pool
    }

    private static func value(_ pool: ConnectionPool) throws -> Int64? {
        try pool.read { try $0.scalarInt("SELECT value FROM box WHERE id = 1") }
    }

    /// The page cache is one budget for the pool, shared equally by the writer and the readers
    /// it keeps, so more readers do not mean more memory.
    @Test(arguments: [(4, 8192), (9, 4096), (63, 1024)])
    func thePageCacheBudgetIsSharedByTheConnections(readers: Int, expectedKiB: Int64) throws {
        let directory = TemporaryDirectory()
        let pool = try ConnectionPool(path: directory.path + "/pool.db", maxIdleReaders: readers, pageCacheKiB: 40 << 10)
        defer { pool.close() }
        // Negative: a size in KiB rather than in pages.
        #expect(try pool.write { try $0.scalarInt("PRAGMA cache_size") } == -expectedKiB)
        #expect(try pool.read { try $0.scalarInt("PRAGMA cache_size") } == -expectedKiB)
    }

    @Test func aReadAfterAWriteSeesIt() throws {
        let directory = TemporaryDirectory()
        let pool = try Self.pool(in: directory)
        defer { pool.close() }
        for value in 1...20 {
            #expect(try Self.value(pool) == Int64(value - 1))
            // Twice, so the second read is answered on the snapshot the first one kept.
            #expect(try Self.value(pool) == Int64(value - 1))
            try pool.write { try $0.execute("UPDATE box SET value = ? WHERE id = 1", [.integer(Int64(value))]) }
        }
        #expect(try Self.value(pool) == 20)
    }

    /// A reader checked out while a write finishes has the older snapshot; it is returned with it
    /// and must not answer the next read from it.
    @Test func aSnapshotOlderThanTheLastWriteIsNotReused() throws {
        let directory = TemporaryDirectory()
        let pool = try Self.pool(in: directory)
        defer { pool.close() }
        try pool.read { outer in
            #expect(try outer.scalarInt("SELECT value FROM box WHERE id = 1") == 0)
            try pool.write { try $0.execute("UPDATE box SET value = 1 WHERE id = 1") }
            // Inside one read, one snapshot: the write is not seen yet.
            #expect(try outer.scalarInt("SELECT value FROM box WHERE id = 1") == 0)
        }
        // The same connection is checked out again (it is the only idle one) and sees the write.
        #expect(try Self.value(pool) == 1)
    }

    @Test func aReadTransactionInsideAReadUsesTheKeptSnapshot() throws {
        let directory = TemporaryDirectory()
        let pool = try Self.pool(in: directory)
        defer { pool.close() }
        let values = try pool.read { db in
            try db.read { [try db.scalarInt("SELECT value FROM box"), try db.scalarInt("SELECT count(*) FROM box")] }
        }
        #expect(values == [0, 1])
    }

    /// Writes of ~8 KB, each between reads on two readers that then sit idle with their
    /// snapshots: without letting those go, no checkpoint could copy the latest write and the WAL
    /// would never start over (2,000 writes would leave a WAL of ~16 MB). With it, the WAL stays
    /// near SQLite's checkpoint size (1,000 pages, 4 MB).
    @Test func keptSnapshotsDoNotKeepTheWALGrowing() throws {
        let directory = TemporaryDirectory()
        let pool = try Self.pool(in: directory)
        defer { pool.close() }
        let padding = [UInt8](repeating: 0xA5, count: 8_000)
        for value in 1...2_000 {
            try pool.write {
                try $0.execute(
                    "UPDATE box SET value = ?, padding = ? WHERE id = 1", [.integer(Int64(value)), .blob(padding)])
            }
            // Two readers at once (a read inside a read checks out a second connection).
            let seen = try pool.read { outer in
                [try outer.scalarInt("SELECT value FROM box WHERE id = 1"), try Self.value(pool)]
            }
            #expect(seen == [Int64(value), Int64(value)])
        }
        let walSize = try FileManager.default.attributesOfItem(atPath: directory.path + "/pool.db-wal")[.size] as? Int
        #expect((walSize ?? .max) < 6 << 20)
    }
}
