import Foundation
import KeychainCore
import Synchronization
import Testing
@testable import KeychainStore

/// Quotas on PostgreSQL: usage kept in shards (no row every write to a group queues on), exact
/// near the bound under concurrent writers on several connections.
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

    @Test func usageFollowsAddsUpdatesMovesAndDeletes() throws {
        let (store, database) = try makeStore(GroupQuota(items: 3, secretBytes: 100))
        try store.add([item(account: "a", secret: "12345"), item(account: "b", secret: nil)])
        let tooMany = #expect(throws: KeychainError.self) {
            try store.add([item(account: "c"), item(account: "d")])
        }
        #expect(tooMany?.code == .diskFull)
        _ = try store.update(
            ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.account: .string("a")]),
            with: ItemChanges(attributes: [.accessGroup: .string("g2")], modificationDate: Date()))
        _ = try store.delete(ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"]))
        #expect(try usage("g1", database).kept == usage("g1", database).counted)
        #expect(try usage("g2", database).kept == [1, 5])
    }
}
