import Foundation
import KeychainCore
import KeychainTestSupport
import Synchronization
import Testing
@testable import KeychainStore
@testable import KeychainSQLite

/// Group quotas on SQLite beyond what every backend does (`GroupQuotaConformance`, run from
/// StorageConformanceTests): the migrations that count what a vault held before usage was kept.
@Suite("Group quotas")
struct GroupQuotaTests {
    /// A store over a fresh file database, and what keeps it alive.
    func makeStore(_ quota: GroupQuota) throws -> (SQLiteItemStore, VaultFixture) {
        let fixture = try VaultFixture()
        return (SQLiteItemStore(pool: fixture.vault.sqlitePool!, keyring: fixture.vault.keyring, logger: quietLogger, quota: quota), fixture)
    }

    func secret(_ count: Int) -> String { String(repeating: "x", count: count) }

    /// The usage the table holds for `group`, and a recount of the items table.
    func usage(_ group: String, _ fixture: VaultFixture) throws -> (kept: [Int64], counted: [Int64]) {
        try fixture.vault.sqlitePool!.read { db in
            let kept = try GroupUsageTable.usage(of: group, on: db)
            let counted = try db.query(
                "SELECT count(*), ifnull(sum(ifnull(length(secret) - \(SealedBox.overhead), 0)), 0) FROM items WHERE \"accessGroup\" = ?",
                [.text(group)]
            ) { row in [row.int64(0), row.int64(1)] }.first ?? []
            return ([kept.items, kept.secretBytes], counted)
        }
    }

    /// The attribute bytes `group_usage` keeps for `group`, and `AttributeValue.storedBytes` of
    /// every item the store holds there (every class, read back).
    func attributeBytes(_ group: String, _ store: SQLiteItemStore, _ fixture: VaultFixture) throws -> (kept: Int64, counted: Int64) {
        let kept = try fixture.vault.sqlitePool!.read { db in try GroupUsageTable.usage(of: group, on: db).attributeBytes }
        let counted = try ItemClass.storedClasses.reduce(0) { sum, itemClass in
            try store.find(ItemFilter(itemClass: itemClass, accessGroups: [group]), limit: nil, after: nil, reading: .attributes)
                .items.reduce(sum) { $0 + AttributeValue.storedBytes(of: $1.attributes) }
        }
        return (kept, Int64(counted))
    }

    /// A vault from before attributes were metered: migration 4 counts what its items hold, in
    /// every class and value type, as the writes since count it.
    @Test func theMigrationCountsTheAttributesAlreadyStored() throws {
        let (store, fixture) = try makeStore(.unlimited)
        try store.add([
            item(account: "a", label: "héllo", extra: [.comment: .string(secret(40)), .generic: .data([1, 2, 3]), .type: .integer(7)]),
            item(.internetPassword, account: "b", extra: [.server: .string("example.com"), .port: .integer(443), .protocol: .string("https")]),
            item(.key, group: "g2", extra: [.applicationTag: .data(Array(repeating: 9, count: 33)), .canSign: .bool(true)]),
        ])
        let before = [try attributeBytes("g1", store, fixture), try attributeBytes("g2", store, fixture)]
        #expect(before.allSatisfy { $0.kept == $0.counted && $0.kept > 0 })
        try fixture.vault.sqlitePool!.write { db in
            try db.executeScript("ALTER TABLE group_usage DROP COLUMN attribute_bytes")
            try db.executeScript(Migrations.version4)
        }
        #expect(try [attributeBytes("g1", store, fixture), attributeBytes("g2", store, fixture)].map(\.kept) == before.map(\.kept))
        #expect(try usage("g1", fixture).kept == usage("g1", fixture).counted)
    }

    /// A vault from before quotas: migration 3 counts what it holds.
    @Test func theMigrationCountsTheItemsAlreadyStored() throws {
        let (store, fixture) = try makeStore(.unlimited)
        try store.add([item(account: "a", secret: secret(7)), item(account: "b", secret: nil), item(account: "c", group: "g2")])
        try fixture.vault.sqlitePool!.write { db in
            try db.executeScript("DROP TABLE group_usage")
            try db.executeScript(Migrations.version3)
            try db.executeScript(Migrations.version4)
        }
        #expect(try usage("g1", fixture).kept == [2, 7])
        #expect(try usage("g2", fixture).kept == [1, 6])
    }

    /// A batch's usage keeps groups apart by their bytes (two names Swift calls equal are two
    /// groups), reads each group's stored usage once, and holds each write to the quota on the
    /// totals before it; a refused write adds nothing.
    @Test func aBatchsUsageIsCheckedWriteByWriteAndKeptPerGroup() throws {
        let composed = "\u{E9}", decomposed = "e\u{301}"
        var reads: [String] = []
        let stored = { (group: String) -> GroupUsage in
            reads.append(group)
            return group.hasSameUTF8(as: composed) ? GroupUsage(items: 3) : GroupUsage(items: 1)
        }
        func write(_ group: String, items: Int64) -> GroupUsageChanges {
            var changes = GroupUsageChanges()
            changes.record(group, GroupUsage(items: items))
            return changes
        }
        let quota = GroupQuota(items: 4, secretBytes: nil)
        var batch = BatchedGroupUsage()
        try batch.admit(write(composed, items: 1), quota: quota, read: stored)
        try batch.admit(write(decomposed, items: 2), quota: quota, read: stored)
        let refused = #expect(throws: KeychainError.self) {
            try batch.admit(write(composed, items: 1), quota: quota, read: stored)
        }
        #expect(refused?.code == .diskFull)
        try batch.admit(write(decomposed, items: 1), quota: quota, read: stored)
        #expect(reads.count == 2)
        var settled: [(String, GroupUsage)] = []
        try batch.settle { settled.append(($0, $1)) }
        let byBytes = settled.sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
        #expect(byBytes.map { Array($0.0.utf8) } == [Array(decomposed.utf8), Array(composed.utf8)])
        #expect(byBytes.map(\.1.items) == [3, 1])
    }
}
