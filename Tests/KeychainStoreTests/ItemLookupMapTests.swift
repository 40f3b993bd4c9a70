import Foundation
import KeychainTestSupport
import KeychainCore
import Testing
@testable import KeychainStore
@testable import KeychainSQLite

@Suite("Lookup map")
struct ItemLookupMapTests {
    func key(_ service: String, _ account: String, group: String = "g") -> ItemLookupMap.Key {
        ItemLookupMap.Key(.genericPassword, [.text(group), .text(service), .text(account)])
    }

    @Test func listsRowsUnderTheirKeyOnceCompleteAndForgetsRemovedOnes() {
        let map = ItemLookupMap()
        map.add(key("s", "a"), seq: 7)
        map.add(key("s", "a"), seq: 3)
        map.add(key("s", "a"), seq: 7)  // already listed
        map.add(key("s", "b"), seq: 4)
        #expect(map.candidates(for: [key("s", "a")]) == nil)  // not complete: finds use the index
        map.markComplete()
        #expect(map.candidates(for: [key("s", "a")]) == [3, 7])
        #expect(map.candidates(for: [key("s", "b")]) == [4])
        #expect(map.candidates(for: [key("s", "c")]) == [])
        #expect(map.count == 3)
        map.remove([ItemLookupMap.Entry(key: key("s", "a"), seq: 3), ItemLookupMap.Entry(key: key("s", "x"), seq: 4)])
        #expect(map.candidates(for: [key("s", "a")]) == [7])
        #expect(map.candidates(for: [key("s", "b")]) == [4])  // removing under another key changes nothing
        map.add(key("s", "a"), seq: 3)  // into the tombstone
        #expect(map.candidates(for: [key("s", "a")]) == [3, 7])
    }

    @Test func keysCompareAsSQLDoes() {
        // Absent is the attribute's default.
        #expect(ItemLookupMap.Key(.genericPassword, [.text("g"), .null, .text("a")]) == key("", "a"))
        // Text compares by its bytes: precomposed and decomposed é are different rows in SQLite.
        #expect(key("\u{E9}", "a") != key("e\u{301}", "a"))
        #expect(key("ab", "c") != key("a", "bc"))
        #expect(ItemLookupMap.Key(.internetPassword, [.text("g"), .text("s"), .text("a")]) != key("s", "a"))
        // The access group is part of the key, compared by its bytes too.
        #expect(key("s", "a", group: "g1") != key("s", "a", group: "g2"))
        #expect(key("s", "a", group: "caf\u{E9}") != key("s", "a", group: "cafe\u{301}"))
        #expect(ItemLookupMap.Key(.genericPassword, [.null, .text("s"), .text("a")]) == key("s", "a", group: ""))
        // A data attribute's default is the empty blob, not the empty text.
        #expect(ItemLookupMap.Key(.key, [.text("g"), .null]) == ItemLookupMap.Key(.key, [.text("g"), .blob([])]))
        #expect(ItemLookupMap.Key(.key, [.text("g"), .blob([])]) != ItemLookupMap.Key(.key, [.text("g"), .text("")]))
    }

    @Test func growsAndDropsTombstonesWithoutLosingARow() {
        let map = ItemLookupMap()
        map.markComplete()
        let count = 20_000
        map.add((0..<count).map { ItemLookupMap.Entry(key: key("s\($0)", "a"), seq: Int64($0 + 1)) })
        map.remove((0..<count).filter { $0 % 2 == 0 }.map { ItemLookupMap.Entry(key: key("s\($0)", "a"), seq: Int64($0 + 1)) })
        for index in 0..<count {  // re-add a quarter: slots reused, then the table rebuilt as it fills
            if index % 4 == 0 { map.add(key("s\(index)", "a"), seq: Int64(index + 1)) }
        }
        #expect(map.count == count / 2 + count / 4)
        // A key's candidates are the listed rows whose keys share its tag (the hash's top 32 bits):
        // its own row, if listed, and, for about one run in twenty at 20,000 keys, another key's.
        let listed = (0..<count).filter { $0 % 2 == 1 || $0 % 4 == 0 }
        let rowsByTag = Dictionary(grouping: listed.map { (tag: key("s\($0)", "a").hash >> 32, seq: Int64($0 + 1)) }, by: \.tag)
        for index in 0..<count {
            let tagged = key("s\(index)", "a")
            let expected = (rowsByTag[tagged.hash >> 32] ?? []).map(\.seq).sorted()
            #expect(map.candidates(for: [tagged]) == expected)
        }
    }

    @Test func candidatesOfSeveralKeysComeInOrderEachOnce() {
        let map = ItemLookupMap()
        map.markComplete()
        map.add(key("s", "a", group: "g1"), seq: 5)
        map.add(key("s", "a", group: "g2"), seq: 2)
        map.add(key("s", "a", group: "g3"), seq: 3)
        // A row being moved from g1 to g2 is listed under both until its transaction ends.
        map.add(key("s", "a", group: "g2"), seq: 5)
        #expect(map.candidates(for: [key("s", "a", group: "g1"), key("s", "a", group: "g2")]) == [2, 5])
        #expect(map.candidates(for: [key("s", "a", group: "g3")]) == [3])
    }

    @Test func keysSharingATagAreBothCandidates() {
        let map = ItemLookupMap()
        map.markComplete()
        // Same top 32 bits (the tag a slot keeps), different rest.
        let first = ItemLookupMap.Key(hash: 0xABCD_0123_0000_0001)
        let second = ItemLookupMap.Key(hash: 0xABCD_0123_FFFF_0002)
        map.add(first, seq: 1)
        map.add(second, seq: 2)
        // A superset: the find's SQL tells them apart.
        #expect(map.candidates(for: [first]) == [1, 2])
        #expect(map.candidates(for: [ItemLookupMap.Key(hash: 0x1BCD_0123_0000_0001)]) == [])
    }

    @Test func aRowBeyondTheEncodingGivesTheMapUp() {
        let map = ItemLookupMap()
        map.markComplete()
        map.add(key("s", "a"), seq: 1)
        map.add(key("s", "b"), seq: ItemLookupMap.largestSeq + 1)
        #expect(map.candidates(for: [key("s", "a")]) == nil)
    }
}

/// The SQLite store's finds through the lookup map, next to the conformance tests (which run
/// every find of theirs through it too: their stores are small, so the map is built at open).
@Suite("Lookup map in the SQLite store")
struct LookupMapStoreTests {
    func find(_ store: any ItemStore, service: String, account: String, groups: [String] = ["g1", "g2"]) throws -> [Item] {
        try store.find(
            ItemFilter(itemClass: .genericPassword, accessGroups: groups, equal: [.service: .string(service), .account: .string(account)]),
            limit: nil, after: nil, reading: .all
        ).items
    }

    @Test(arguments: [StoreKind.sqliteMemory, .sqliteFile])
    func anUpdateThatChangesTheLookupAttributesMovesTheItem(kind: StoreKind) throws {
        let (store, keep) = try kind.make()
        defer { withExtendedLifetime(keep) {} }
        try store.add([item(account: "a", service: "old")])
        let byOld = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.service: .string("old")])
        #expect(try store.update(byOld, with: ItemChanges(attributes: [.service: .string("new")], modificationDate: Date())) == 1)
        #expect(try find(store, service: "old", account: "a").isEmpty)
        #expect(try find(store, service: "new", account: "a").count == 1)
        // Removing the account: the item is found under the empty (default) account.
        let byNew = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.service: .string("new")])
        #expect(try store.update(byNew, with: ItemChanges(attributes: [.account: nil], modificationDate: Date())) == 1)
        #expect(try find(store, service: "new", account: "a").isEmpty)
        #expect(try find(store, service: "new", account: "").count == 1)
    }

    @Test(arguments: [StoreKind.sqliteMemory, .sqliteFile])
    func deletedReplacedAndRolledBackItemsAreNotFound(kind: StoreKind) throws {
        let (store, keep) = try kind.make()
        defer { withExtendedLifetime(keep) {} }
        try store.add([item(account: "a", service: "s"), item(account: "taken", service: "s")])
        let byA = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.account: .string("a")])
        #expect(try store.delete(byA) == 1)
        #expect(try find(store, service: "s", account: "a").isEmpty)
        // A batch that fails lists its first item for a moment, but it is never found.
        #expect(throws: KeychainError.duplicateItem()) {
            try store.add([item(account: "ghost", service: "s"), item(account: "taken", service: "s")])
        }
        #expect(try find(store, service: "s", account: "ghost").isEmpty)
        let readded = item(account: "a", service: "s", secret: "again")
        try store.transaction { transaction in
            #expect(try transaction.delete(byA) == 0)
            try transaction.add([readded])
        }
        #expect(try find(store, service: "s", account: "a").map { $0.secret?.utf8String() } == ["again"])
        // Replacing the newest row: the added one takes its `seq` and must stay listed.
        let newest = item(account: "newest", service: "s", secret: "first")
        try store.add([newest])
        let byNewest = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.account: .string("newest")])
        try store.transaction { transaction in
            #expect(try transaction.delete(byNewest) == 1)
            try transaction.add([item(account: "newest", service: "s", secret: "second")])
        }
        #expect(try find(store, service: "s", account: "newest").map { $0.secret?.utf8String() } == ["second"])
        #expect(try store.delete(byA) == 1)
        #expect(try find(store, service: "s", account: "a").isEmpty)
        #expect(try find(store, service: "s", account: "taken").count == 1)
    }

    @Test(arguments: [StoreKind.sqliteMemory, .sqliteFile])
    func itemsSharingALookupKeyPageInCreationOrder(kind: StoreKind) throws {
        let (store, keep) = try kind.make()
        defer { withExtendedLifetime(keep) {} }
        let items = [
            item(account: "a", service: "s", group: "g2"), item(account: "a", service: "s", group: "g1"),
            item(account: "other", service: "s"),
            item(account: "a", service: "s", group: "g1", extra: [.synchronizable: .bool(true)]),
        ]
        try store.add(items)
        let filter = ItemFilter(
            itemClass: .genericPassword, accessGroups: ["g1", "g2"],
            equal: [.service: .string("s"), .account: .string("a"), .synchronizable: .bool(false)])
        let first = try store.find(filter, limit: 1, after: nil, reading: .attributes)
        #expect(first.items.map(\.persistentRef) == [items[0].persistentRef])
        let second = try store.find(filter, limit: 1, after: first.next, reading: .attributes)
        #expect(second.items.map(\.persistentRef) == [items[1].persistentRef])
        #expect(second.next == nil)
        #expect(try find(store, service: "s", account: "a").map(\.persistentRef) == [0, 1, 3].map { items[$0].persistentRef })
        #expect(try find(store, service: "s", account: "a", groups: ["g2"]).map(\.persistentRef) == [items[0].persistentRef])
        // Case-insensitive finds use the lookup index, and still find them.
        let folded = ItemFilter(
            itemClass: .genericPassword, accessGroups: ["g1", "g2"], equal: [.service: .string("S"), .account: .string("A")],
            caseInsensitive: true)
        #expect(try store.find(folded, limit: nil, after: nil, reading: []).items.count == 3)
    }

    /// Issue 29, item 5: 3,000 items of another group under the same service and account
    /// (different `tokenID`) are no candidates of a group's exact read, so it reads one row by
    /// `seq`, not 3,001 (bench/tenant-isolation.sh times it).
    @Test func aReadFromOneGroupTouchesOnlyThatGroupsCandidates() throws {
        let fixture = try VaultFixture()
        let store = SQLiteItemStore(pool: fixture.vault.sqlitePool!, keyring: fixture.vault.keyring, logger: quietLogger)
        let crowd = (0..<3000).map { index in
            item(account: "a", service: "s", group: "B", secret: nil, extra: [.tokenID: .string("t\(index)")])
        }
        try store.add(crowd)
        try store.add([item(account: "a", service: "s", group: "A", secret: "mine")])
        let exact: [Attribute: AttributeValue] = [.service: .string("s"), .account: .string("a")]
        let ofA = ItemFilter(itemClass: .genericPassword, accessGroups: ["A"], equal: exact)
        let keys = try #require(ItemTable.lookupKeys(of: ofA))
        #expect(store.lookups.candidates(for: keys)?.count == 1)
        #expect(try store.find(ofA, limit: 1, after: nil, reading: .all).items.map { $0.secret?.utf8String() } == ["mine"])
        // A client of both groups sees both, each row once, in creation order.
        let ofBoth = ItemFilter(itemClass: .genericPassword, accessGroups: ["A", "B"], equal: exact)
        #expect(store.lookups.candidates(for: try #require(ItemTable.lookupKeys(of: ofBoth)))?.count == 3001)
        #expect(try store.find(ofBoth, limit: nil, after: nil, reading: []).items.count == 3001)
    }

    /// An update that moves an item to another group lists it under the new group's key.
    @Test(arguments: [StoreKind.sqliteMemory, .sqliteFile])
    func anUpdateThatChangesTheGroupMovesTheItem(kind: StoreKind) throws {
        let (store, keep) = try kind.make()
        defer { withExtendedLifetime(keep) {} }
        try store.add([item(account: "a", service: "s", group: "g1")])
        let inG1 = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.service: .string("s")])
        #expect(try store.update(inG1, with: ItemChanges(attributes: [.accessGroup: .string("g2")], modificationDate: Date())) == 1)
        #expect(try find(store, service: "s", account: "a", groups: ["g1"]).isEmpty)
        #expect(try find(store, service: "s", account: "a", groups: ["g2"]).map { $0.secret?.utf8String() } == ["secret"])
        #expect(try find(store, service: "s", account: "a").count == 1)
    }

    /// A vault large enough to be built in the background, written to while it is: every item
    /// there at the end is found by its lookup attributes, and none that is gone.
    @Test func aBackgroundBuildMissesNoWriteMadeMeanwhile() throws {
        let fixture = try VaultFixture()
        let count = ItemLookupMap.buildChunk * 2 + 500
        try fixture.vault.items.add((0..<count).map { item(account: "a\($0)", service: "s", secret: nil) })
        let store = SQLiteItemStore(pool: fixture.vault.sqlitePool!, keyring: fixture.vault.keyring, logger: quietLogger, inlineLookupBuild: 0)
        for index in stride(from: 0, to: count, by: 997) {
            let filter = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.account: .string("a\(index)")])
            if index % 2 == 0 {
                #expect(try store.delete(filter) == 1)
            } else {
                _ = try store.update(filter, with: ItemChanges(attributes: [.service: .string("moved")], modificationDate: Date()))
            }
        }
        try store.add([item(account: "late", service: "s", secret: nil)])
        var waited = 0
        while !store.lookups.isComplete, waited < 1000 {
            Thread.sleep(forTimeInterval: 0.01)
            waited += 1
        }
        #expect(store.lookups.isComplete)
        for index in 0..<count {
            let found = try find(store, service: "s", account: "a\(index)").count
            let moved = try find(store, service: "moved", account: "a\(index)").count
            let expected = index % 997 != 0 ? (1, 0) : index % 2 == 0 ? (0, 0) : (0, 1)
            #expect(found == expected.0 && moved == expected.1, "a\(index)")
        }
        #expect(try find(store, service: "s", account: "late").count == 1)
    }
}
