import Foundation
import KeychainTestSupport
import KeychainCore
import Synchronization
import Testing

@testable import KeychainStore
@testable import KeychainSQLite

/// The store's cache of recent finds (`FindCache`): repeated reads are answered from it, and no
/// read after an acknowledged write answers from before that write.
@Suite("Find cache")
struct FindCacheTests {
    private static let byAccount = ItemFilter(
        itemClass: .genericPassword, accessGroups: ["g1"], equal: [.account: .string("a")])

    private static func secret(_ vault: Vault) throws -> String? {
        try vault.items.find(byAccount, limit: 1, after: nil, reading: .all).items.first?.secret?.utf8String()
    }

    @Test func everyKindOfWriteIsSeenByTheNextRead() throws {
        let fixture = try VaultFixture()
        let vault = fixture.vault
        try vault.items.add([item(account: "a", secret: "one")])
        #expect(try Self.secret(vault) == "one")
        #expect(try Self.secret(vault) == "one")

        _ = try vault.items.update(Self.byAccount, with: ItemChanges(secret: SecretBytes(utf8: "two"), modificationDate: Date()))
        #expect(try Self.secret(vault) == "two")

        try vault.items.transaction { transaction in
            _ = try transaction.delete(Self.byAccount)
            try transaction.add([item(account: "a", secret: "three")])
        }
        #expect(try Self.secret(vault) == "three")

        _ = try vault.items.delete(Self.byAccount)
        #expect(try Self.secret(vault) == nil)

        try vault.items.add([item(account: "a", secret: "four")])
        #expect(try Self.secret(vault) == "four")
    }

    @Test func cachedRowsAreKeptSealedAndOpenedPerAnswer() throws {
        let fixture = try VaultFixture()
        let vault = fixture.vault
        try vault.items.add([item(account: "a", secret: "one")])
        let first = try vault.items.find(Self.byAccount, limit: 1, after: nil, reading: .all).items[0]
        let second = try vault.items.find(Self.byAccount, limit: 1, after: nil, reading: .all).items[0]
        // Each answer holds its own opened copy, so wiping one cannot empty the other.
        #expect(first.secret !== second.secret)
        // A locked vault answers nothing, cached or not.
        vault.lock()
        #expect(throws: KeychainError.self) { try Self.secret(vault) }
    }

    /// A writer counts up while readers read: once a write is acknowledged, no later read may
    /// answer an older value.
    @Test func readsNeverGoBackBehindAnAcknowledgedWrite() throws {
        let fixture = try VaultFixture()
        let vault = fixture.vault
        try vault.items.add([item(account: "a", secret: "0")])
        let acknowledged = Atomic<Int>(0)
        let stale = Atomic<Int>(0)
        let writes = 300
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            if worker == 0 {
                for value in 1...writes {
                    _ = try? vault.items.update(
                        Self.byAccount, with: ItemChanges(secret: SecretBytes(utf8: "\(value)"), modificationDate: Date()))
                    acknowledged.store(value, ordering: .sequentiallyConsistent)
                }
            } else {
                for _ in 0..<2_000 {
                    let floor = acknowledged.load(ordering: .sequentiallyConsistent)
                    let read = (try? Self.secret(vault)).flatMap { $0 }.flatMap(Int.init) ?? -1
                    if read < floor { stale.add(1, ordering: .relaxed) }
                }
            }
        }
        #expect(stale.load(ordering: .relaxed) == 0)
        #expect(try Self.secret(vault) == "\(writes)")
    }

    @Test func keysAreEqualExactlyWhenTheFindsAre() {
        var attributes: [Attribute: AttributeValue] = [:]
        attributes.reserveCapacity(40)
        for (attribute, value) in [(Attribute.service, "s"), (.account, "a"), (.label, "l")] {
            attributes[attribute] = .string(value)
        }
        let one = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: attributes)
        let same = ItemFilter(
            itemClass: .genericPassword, accessGroups: ["g1"],
            equal: [.label: .string("l"), .account: .string("a"), .service: .string("s")])
        let key = FindCache.Key(filter: one, limit: 1, after: nil, contents: .all)
        let equal = FindCache.Key(filter: same, limit: 1, after: nil, contents: .all)
        #expect(key == equal && key.hashValue == equal.hashValue)
        var otherValue = same
        otherValue.equal[.account] = .string("b")
        let others = [
            FindCache.Key(filter: otherValue, limit: 1, after: nil, contents: .all),
            FindCache.Key(filter: same, limit: 2, after: nil, contents: .all),
            FindCache.Key(filter: same, limit: 1, after: ItemCursor(afterSequence: 1), contents: .all),
            FindCache.Key(filter: same, limit: 1, after: nil, contents: .attributes),
            FindCache.Key(filter: same, limit: 1, after: nil, contents: .secret),
        ]
        for other in others { #expect(other != key) }
        #expect(Set(others + [key, equal]).count == 6)
    }

    @Test func boundedInEntriesAndRows() throws {
        let cache = FindCache(maxEntries: 2, maxRows: 1)
        func key(_ account: String) -> FindCache.Key {
            FindCache.Key(
                filter: ItemFilter(itemClass: .genericPassword, accessGroups: ["g"], equal: [.account: .string(account)]),
                limit: nil, after: nil, contents: .attributes)
        }
        func row(_ seq: Int64) -> FoundRow { FoundRow(seq: seq, item: item(account: "x"), sealedSecret: nil) }
        var reads = 0
        func rows(_ account: String, count: Int = 1) -> [FoundRow] {
            cache.rows(for: key(account), generation: { 7 }) {
                reads += 1
                return (0..<count).map { row(Int64($0)) }
            }
        }
        _ = rows("a")
        _ = rows("a")
        _ = rows("a")
        #expect(reads == 2, "kept from the second miss on")
        _ = rows("big", count: 2)
        _ = rows("big", count: 2)
        _ = rows("big", count: 2)
        #expect(reads == 5, "finds of more than maxRows rows are not kept")
        for account in ["b", "b", "c", "c"] { _ = rows(account) }  // keeping "c" starts the cache over
        _ = rows("a")
        #expect(reads == 10)
    }

    /// A find read once is not kept (reads spread over a large vault would only churn the
    /// cache); its second read keeps it, and later reads are answered from the cache.
    @Test func keptFromTheSecondMiss() throws {
        let cache = FindCache(maxEntries: 4, maxRows: 8)
        var reads = 0
        func read(_ account: String) {
            let key = FindCache.Key(
                filter: ItemFilter(itemClass: .genericPassword, accessGroups: ["g"], equal: [.account: .string(account)]),
                limit: nil, after: nil, contents: .attributes)
            _ = cache.rows(for: key, generation: { 3 }) {
                reads += 1
                return [FoundRow(seq: 1, item: item(account: account), sealedSecret: nil)]
            }
        }
        for account in (0..<100).map(String.init) { read(account) }
        #expect(reads == 100)
        read("99")
        #expect(reads == 101, "the second read of a find misses and keeps it")
        read("99")
        read("99")
        #expect(reads == 101)
    }

    @Test func boundedInBytes() throws {
        // Rows are about 256 bytes plus their values: room for about 4 of 300 bytes in 1,600.
        let cache = FindCache(maxEntries: 100, maxRows: 8, maxBytes: 16 * 300)
        var reads = 0
        func rows(_ account: String, sealed: Int) -> [FoundRow] {
            let key = FindCache.Key(
                filter: ItemFilter(itemClass: .genericPassword, accessGroups: ["g"], equal: [.account: .string(account)]),
                limit: nil, after: nil, contents: .all)
            return cache.rows(for: key, generation: { 1 }) {
                reads += 1
                return [FoundRow(seq: 1, item: item(account: "x"), sealedSecret: [UInt8](repeating: 7, count: sealed))]
            }
        }
        for _ in 0..<3 { _ = rows("big", sealed: 1_000) }
        #expect(reads == 3, "a find larger than 1/16 of the budget is not kept")
        // Each read twice in a row: its second miss is kept whatever slot of the doorkeeper it
        // shares (hashes are seeded per process; read in turns, two finds whose hashes share a
        // slot would push each other out of it for ever, 2 % of runs).
        for account in ["a", "b", "c", "d"] {
            _ = rows(account, sealed: 0)
            _ = rows(account, sealed: 0)
        }
        for account in ["a", "b", "c", "d"] { _ = rows(account, sealed: 0) }
        #expect(reads == 11, "small finds are kept (from their second read)")
        for _ in 0..<2 {
            for account in (0..<40).map(String.init) { _ = rows(account, sealed: 0) }
        }
        _ = rows("a", sealed: 0)
        #expect(reads == 92, "passing the byte budget started the cache over")
    }
}
