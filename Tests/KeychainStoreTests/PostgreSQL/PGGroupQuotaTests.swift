import Foundation
import KeychainTestSupport
import KeychainCore
import Synchronization
import Testing
@testable import KeychainStore
@testable import KeychainPostgreSQL

/// Quotas on PostgreSQL beyond what every backend does (`GroupQuotaConformance`): usage kept in
/// shards (no row every write to a group queues on), exact near the bound under concurrent
/// writers on several connections, and the migration that counts what was stored before.
@Suite("PostgreSQL group quotas")
struct PGGroupQuotaTests {
    func makeStore(_ quota: GroupQuota) throws -> (PGItemStore, PGTestDatabase) {
        let database = try PGTestDatabase()
        return (try database.itemStore(quota: quota), database)
    }

    /// The usage summed over the group's shards, and a recount of the items table.
    func usage(_ group: String, _ database: PGTestDatabase) throws -> (kept: [Int64], counted: [Int64]) {
        let db = try database.connect()
        let kept = try db.execute(
            "SELECT coalesce(sum(items), 0)::bigint, coalesce(sum(secret_bytes), 0)::bigint FROM group_usage WHERE access_group = $1",
            [.text(group)])
        let counted = try db.execute(
            """
            SELECT count(*), coalesce(sum(coalesce(octet_length(secret) - \(SealedBox.overhead), 0)), 0)::bigint
            FROM items WHERE "accessGroup" = $1
            """, [.text(group)])
        return ([kept.int64(0, 0), kept.int64(0, 1)], [counted.int64(0, 0), counted.int64(0, 1)])
    }

    /// Writers on many threads, each with its own connection: exactly the quota's worth of adds
    /// succeed, and the shards add up to what is stored.
    @Test func theQuotaIsExactUnderConcurrentWriters() throws {
        let (store, database) = try makeStore(GroupQuota(items: 100, secretBytes: nil))
        let added = Atomic(0)
        let finished = Atomic(0)
        let threads = 8
        for thread in 0..<threads {
            Thread {
                for index in 0..<40 where (try? store.add([item(account: "t\(thread)-\(index)", secret: "s")])) != nil {
                    added.add(1, ordering: .relaxed)
                }
                finished.add(1, ordering: .relaxed)
            }.start()
        }
        #expect(waitUntil(within: 60) { finished.load(ordering: .relaxed) == threads })
        #expect(added.load(ordering: .relaxed) == 100)
        #expect(try usage("g1", database).kept == [100, 100])
        let shards = try database.connect().execute("SELECT count(*) FROM group_usage WHERE access_group = 'g1'").int64(0, 0)
        #expect(shards > 1)
    }

    /// The attribute bytes kept for `group` (over its shards), and `AttributeValue.storedBytes`
    /// of every item stored there, read back.
    func attributeBytes(_ group: String, _ store: PGItemStore, _ database: PGTestDatabase) throws -> (kept: Int64, counted: Int64) {
        let kept = try database.connect().execute(
            "SELECT coalesce(sum(attribute_bytes), 0)::bigint FROM group_usage WHERE access_group = $1", [.text(group)]
        ).int64(0, 0)
        let counted = try ItemClass.storedClasses.reduce(0) { sum, itemClass in
            try store.find(ItemFilter(itemClass: itemClass, accessGroups: [group]), limit: nil, after: nil, reading: .attributes)
                .items.reduce(sum) { $0 + AttributeValue.storedBytes(of: $1.attributes) }
        }
        return (kept, Int64(counted))
    }

    /// A database from before attributes were metered: migration 4 counts what is stored.
    @Test func theMigrationCountsTheAttributesAlreadyStored() throws {
        let (store, database) = try makeStore(.unlimited)
        try store.add([
            item(account: "a", label: "héllo", extra: [.comment: .string("a comment"), .generic: .data([1, 2, 3]), .type: .integer(7)]),
            item(.internetPassword, account: "b", extra: [.server: .string("example.com"), .port: .integer(443)]),
            item(.key, group: "g2", extra: [.applicationTag: .data(Array(repeating: 9, count: 33)), .canSign: .bool(true)]),
        ])
        let before = [try attributeBytes("g1", store, database), try attributeBytes("g2", store, database)]
        #expect(before.allSatisfy { $0.kept == $0.counted && $0.kept > 0 })
        try database.connect().executeScript("ALTER TABLE group_usage DROP COLUMN attribute_bytes; " + PGMigrations.version4)
        #expect(try [attributeBytes("g1", store, database), attributeBytes("g2", store, database)].map(\.kept) == before.map(\.kept))
    }
}
