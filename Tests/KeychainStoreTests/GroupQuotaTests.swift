import Foundation
import KeychainCore
import KeychainTestSupport
import Synchronization
import Testing
@testable import KeychainStore
@testable import KeychainSQLite

/// Issue 29, item 5: what one access group may hold (`GroupQuota`), enforced by the SQLite
/// store's write transactions and exact under concurrent writers.
@Suite("Group quotas")
struct GroupQuotaTests {
    /// A store over a fresh file database, and what keeps it alive.
    func makeStore(_ quota: GroupQuota) throws -> (SQLiteItemStore, VaultFixture) {
        let fixture = try VaultFixture()
        return (SQLiteItemStore(pool: fixture.vault.sqlitePool!, keyring: fixture.vault.keyring, logger: quietLogger, quota: quota), fixture)
    }

    func secret(_ count: Int) -> String { String(repeating: "x", count: count) }

    func inGroup(_ group: String, account: String? = nil) -> ItemFilter {
        ItemFilter(
            itemClass: .genericPassword, accessGroups: [group], equal: account.map { [.account: .string($0)] } ?? [:])
    }

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

    @Test func anAddPastTheItemQuotaIsDiskFullAndChangesNothing() throws {
        let (store, fixture) = try makeStore(GroupQuota(items: 3, secretBytes: nil))
        try store.add([item(account: "a"), item(account: "b")])
        // A batch that would pass the quota adds none of its items.
        #expect(status { try store.add([item(account: "c"), item(account: "d")]) } == .diskFull)
        try store.add([item(account: "c")])
        #expect(status { try store.add([item(account: "d")]) } == .diskFull)
        #expect(try store.find(inGroup("g1"), limit: nil, after: nil, reading: []).items.count == 3)
        // Another group has a quota of its own.
        try store.add((0..<3).map { item(account: "a\($0)", group: "g2") })
        #expect(try usage("g1", fixture).kept == [3, 18])
        #expect(try usage("g1", fixture).kept == usage("g1", fixture).counted)
    }

    @Test func anAddPastTheByteQuotaIsDiskFull() throws {
        let (store, fixture) = try makeStore(GroupQuota(items: nil, secretBytes: 100))
        try store.add([item(account: "a", secret: secret(60))])
        let refused = #expect(throws: KeychainError.self) { try store.add([item(account: "b", secret: secret(41))]) }
        #expect(refused?.code == .diskFull)
        #expect(refused?.detail?.contains("quota.secretBytes") == true)
        #expect(refused?.detail?.contains("xxxx") == false)
        try store.add([item(account: "b", secret: secret(40))])  // exactly the quota
        // Attributes do not count, and an item without a secret adds none.
        try store.add([item(account: "c", label: secret(500), secret: nil)])
        #expect(try usage("g1", fixture).kept == [3, 100])
        #expect(try usage("g1", fixture).kept == usage("g1", fixture).counted)
    }

    @Test func updatesThatShrinkOrMoveNothingAreNotRefused() throws {
        let (store, fixture) = try makeStore(GroupQuota(items: nil, secretBytes: 100))
        try store.add([item(account: "a", secret: secret(100))])
        let changes = { (text: String) in ItemChanges(secret: SecretBytes(utf8: text), modificationDate: Date()) }
        #expect(status { try store.update(inGroup("g1"), with: changes(secret(101))) } == .diskFull)
        #expect(try store.update(inGroup("g1"), with: changes(secret(10))) == 1)
        #expect(try usage("g1", fixture).kept == [1, 10])
        #expect(try store.update(inGroup("g1"), with: changes(secret(100))) == 1)
        // With a lower quota (a restart with a smaller quota.secretBytes), the group is over it:
        // what does not grow it still goes through, what grows it does not.
        let lowered = SQLiteItemStore(
            pool: fixture.vault.sqlitePool!, keyring: fixture.vault.keyring, logger: quietLogger,
            quota: GroupQuota(items: nil, secretBytes: 50))
        #expect(try lowered.update(inGroup("g1"), with: changes(secret(80))) == 1)
        #expect(
            try lowered.update(
                inGroup("g1"), with: ItemChanges(attributes: [.label: .string("renamed")], modificationDate: Date())) == 1)
        #expect(status { try lowered.update(inGroup("g1"), with: changes(secret(81))) } == .diskFull)
        #expect(status { try lowered.add([item(account: "b", secret: secret(1))]) } == .diskFull)
        #expect(try usage("g1", fixture).kept == [1, 80])
    }

    @Test func deletesAndMovesFreeQuota() throws {
        let (store, fixture) = try makeStore(GroupQuota(items: 2, secretBytes: 20))
        try store.add([item(account: "a", secret: secret(10)), item(account: "b", secret: secret(10))])
        #expect(status { try store.add([item(account: "c", secret: nil)]) } == .diskFull)
        #expect(try store.delete(inGroup("g1", account: "a")) == 1)
        #expect(try usage("g1", fixture).kept == [1, 10])
        try store.add([item(account: "c", secret: secret(10))])
        // Moving an item to another group moves its usage; the target's quota applies.
        let move = ItemChanges(attributes: [.accessGroup: .string("g2")], modificationDate: Date())
        #expect(try store.update(inGroup("g1", account: "b"), with: move) == 1)
        #expect(try usage("g1", fixture).kept == [1, 10])
        #expect(try usage("g2", fixture).kept == [1, 10])
        try store.add([item(account: "d", group: "g2", secret: secret(10))])
        #expect(status { try store.update(inGroup("g1", account: "c"), with: move) } == .diskFull)
        // A failed transaction leaves the usage as it was.
        #expect(try usage("g1", fixture).kept == usage("g1", fixture).counted)
        #expect(try usage("g2", fixture).kept == usage("g2", fixture).counted)
    }

    /// Writers on many threads: exactly the quota's worth of adds succeed, no more.
    @Test func theQuotaIsExactUnderConcurrentWriters() throws {
        let (store, fixture) = try makeStore(GroupQuota(items: 100, secretBytes: nil))
        let threads = 8
        let perThread = 40
        let added = Atomic(0)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<perThread where (try? store.add([item(account: "t\(thread)-\(index)", secret: "s")])) != nil {
                added.add(1, ordering: .relaxed)
            }
        }
        #expect(added.load(ordering: .relaxed) == 100)
        #expect(try usage("g1", fixture).kept == [100, 100])
        #expect(try usage("g1", fixture).kept == usage("g1", fixture).counted)
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

    /// Issue 40, finding 5: attributes were not metered, so 1 MB labels went past any quota.
    /// They count in `quota.attributeBytes`; adds and updates that grow past it change nothing.
    @Test func attributesCountAgainstTheAttributeQuota() throws {
        let (store, fixture) = try makeStore(GroupQuota(items: nil, secretBytes: 100, attributeBytes: 1000))
        try store.add([item(account: "a", label: secret(600), secret: nil)])
        let used = try attributeBytes("g1", store, fixture)
        #expect(used.kept == used.counted && used.kept > 600)
        let refused = #expect(throws: KeychainError.self) { try store.add([item(account: "b", label: secret(600))]) }
        #expect(refused?.code == .diskFull)
        #expect(refused?.detail?.contains("quota.attributeBytes") == true)
        // An update that grows the attributes past the quota changes nothing; one that shrinks them goes through.
        let grow = ItemChanges(attributes: [.comment: .string(secret(900))], modificationDate: Date())
        #expect(status { try store.update(inGroup("g1"), with: grow) } == .diskFull)
        let stored = try store.find(inGroup("g1"), limit: nil, after: nil, reading: .attributes).items
        #expect(stored.count == 1 && stored[0].attributes[.comment] == nil)
        #expect(try attributeBytes("g1", store, fixture).kept == used.kept)
        let shrink = ItemChanges(attributes: [.label: .string("short"), .comment: .string(secret(300))], modificationDate: Date())
        #expect(try store.update(inGroup("g1"), with: shrink) == 1)
        #expect(try attributeBytes("g1", store, fixture).kept == used.kept - 595 + 300)
        // Moves carry the attributes' bytes; deletes free them.
        let move = ItemChanges(attributes: [.accessGroup: .string("g2")], modificationDate: Date())
        #expect(try store.update(inGroup("g1"), with: move) == 1)
        #expect(try attributeBytes("g1", store, fixture).kept == 0)
        let moved = try attributeBytes("g2", store, fixture)
        #expect(moved.kept == moved.counted && moved.kept > 300)
        #expect(try store.delete(ItemFilter(itemClass: .genericPassword, accessGroups: ["g2"])) == 1)
        #expect(try attributeBytes("g2", store, fixture).kept == 0)
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
}
