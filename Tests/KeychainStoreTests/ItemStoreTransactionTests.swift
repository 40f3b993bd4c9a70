import Foundation
import KeychainTestSupport
import KeychainCore
import Testing
@testable import KeychainStore
@testable import KeychainSQLite

/// `ItemStore.transaction` on SQLite alone (every store's transaction checks are in
/// `ItemStoreConformance`, KeychainTestSupport).
@Suite("ItemStore transactions: SQLite")
struct ItemStoreTransactionTests {
    private struct Abandoned: Error, Equatable {}

    /// The SQLite store's lookup map after a rollback: what the transaction deleted or re-keyed is
    /// still found under its old key, and what it added is not found.
    @Test(arguments: [StoreKind.sqliteMemory, .sqliteFile])
    func aRollbackLeavesTheLookupMapRight(kind: StoreKind) throws {
        let (store, keep) = try kind.make()
        defer { withExtendedLifetime(keep) {} }
        try store.add([item(account: "a", service: "s", secret: "one"), item(account: "b", service: "s", secret: "two")])
        func find(_ account: String) throws -> [String?] {
            let filter = ItemFilter(
                itemClass: .genericPassword, accessGroups: ["g1"], equal: [.service: .string("s"), .account: .string(account)])
            return try store.find(filter, limit: nil, after: nil, reading: .all).items.map { $0.secret?.utf8String() }
        }
        #expect(throws: Abandoned()) {
            try store.transaction { transaction in
                _ = try transaction.delete(ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.account: .string("a")]))
                _ = try transaction.update(
                    ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.account: .string("b")]),
                    with: ItemChanges(attributes: [.account: .string("c")], modificationDate: Date()))
                try transaction.add([item(account: "a", service: "s", secret: "ghost")])
                throw Abandoned()
            }
        }
        #expect(try find("a") == ["one"])
        #expect(try find("b") == ["two"])
        #expect(try find("c").isEmpty)
    }
}
