import Foundation
import KeychainCore
import Testing
@testable import KeychainStore

/// `ItemStore.transaction`, held to the same conformance by every store: all or nothing, reads
/// inside see the writes before them, and primary keys are enforced against what the
/// transaction has written so far.
@Suite("ItemStore transactions")
struct ItemStoreTransactionTests {
    let all = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1", "g2"])
    let access = ItemFilter(
        itemClass: .genericPassword, accessGroups: ["g1"], equal: [.service: .string("api"), .account: .string("accessToken")])
    let refresh = ItemFilter(
        itemClass: .genericPassword, accessGroups: ["g1"], equal: [.service: .string("api"), .account: .string("refreshToken")])

    private struct Abandoned: Error, Equatable {}

    private func secrets(_ store: any ItemOperations) throws -> [String?] {
        try store.find(all, limit: nil, after: nil, reading: .all).items.map { $0.secret?.utf8String() }
    }

    @Test(arguments: StoreKind.allCases)
    func deletesAndAddsCommitTogether(kind: StoreKind) throws {
        let (store, keep) = try kind.make()
        defer { withExtendedLifetime(keep) {} }
        try store.add([item(account: "accessToken", service: "api", secret: "old-access"), item(account: "other", service: "api", secret: "untouched")])
        // Replacing a pair: one old item deleted, two new ones added.
        let deleted = try store.transaction { transaction in
            let deleted = try transaction.delete(access) + transaction.delete(refresh)
            try transaction.add([
                item(account: "accessToken", service: "api", secret: "new-access"),
                item(account: "refreshToken", service: "api", secret: "new-refresh"),
            ])
            return deleted
        }
        #expect(deleted == 1)
        #expect(try secrets(store) == ["untouched", "new-access", "new-refresh"])
        // A filter outside the groups deletes nothing.
        let foreign = ItemFilter(itemClass: .genericPassword, accessGroups: ["g2"], equal: [.service: .string("api")])
        #expect(try store.transaction { try $0.delete(foreign) } == 0)
        #expect(try secrets(store) == ["untouched", "new-access", "new-refresh"])
    }

    @Test(arguments: StoreKind.allCases)
    func anErrorThrownByTheBodyUndoesEverything(kind: StoreKind) throws {
        let (store, keep) = try kind.make()
        defer { withExtendedLifetime(keep) {} }
        let a = item(account: "a", service: "s", label: "before", secret: "one")
        try store.add([a])
        #expect(throws: Abandoned()) {
            try store.transaction { transaction in
                try transaction.add([item(account: "b", service: "s", secret: "two")])
                _ = try transaction.update(
                    ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], persistentRef: a.persistentRef),
                    with: ItemChanges(attributes: [.label: .string("after")], secret: SecretBytes(utf8: "changed"), modificationDate: Date()))
                _ = try transaction.delete(ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.account: .string("a")]))
                throw Abandoned()
            }
        }
        let page = try store.find(all, limit: nil, after: nil, reading: .all)
        #expect(page.items.map(\.persistentRef) == [a.persistentRef])
        #expect(page.items.first?[.label] == .string("before"))
        #expect(page.items.first?.secret?.utf8String() == "one")
        // The store goes on as before.
        try store.add([item(account: "b", service: "s", secret: "two")])
        #expect(try secrets(store) == ["one", "two"])
    }

    @Test(arguments: StoreKind.allCases)
    func aClashWithAnItemThatStaysUndoesEverything(kind: StoreKind) throws {
        let (store, keep) = try kind.make()
        defer { withExtendedLifetime(keep) {} }
        try store.add([item(account: "accessToken", service: "api", secret: "access"), item(account: "other", service: "api", secret: "untouched")])
        #expect(throws: KeychainError.duplicateItem()) {
            try store.transaction { transaction in
                _ = try transaction.delete(access)
                try transaction.add([
                    item(account: "accessToken", service: "api", secret: "newer-access"),
                    item(account: "other", service: "api", secret: "clash"),
                ])
            }
        }
        #expect(try secrets(store) == ["access", "untouched"])
    }

    @Test(arguments: StoreKind.allCases)
    func duplicatesAmongTheTransactionsOwnWritesUndoEverything(kind: StoreKind) throws {
        let (store, keep) = try kind.make()
        defer { withExtendedLifetime(keep) {} }
        try store.add([item(account: "kept", service: "s", secret: "kept")])
        // The same key added twice, in one add or in two.
        #expect(throws: KeychainError.duplicateItem()) {
            try store.transaction { transaction in
                try transaction.add([item(account: "new", service: "s"), item(account: "new", service: "s")])
            }
        }
        #expect(throws: KeychainError.duplicateItem()) {
            try store.transaction { transaction in
                try transaction.add([item(account: "new", service: "s", secret: "first")])
                try transaction.add([item(account: "other", service: "s")])
                try transaction.add([item(account: "new", service: "s", secret: "second")])
            }
        }
        // An update onto a key the transaction added.
        #expect(throws: KeychainError.duplicateItem()) {
            try store.transaction { transaction in
                try transaction.add([item(account: "new", service: "s")])
                _ = try transaction.update(
                    ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.account: .string("kept")]),
                    with: ItemChanges(attributes: [.account: .string("new")], modificationDate: Date()))
            }
        }
        #expect(try secrets(store) == ["kept"])
        // A key the transaction deleted first is free again within it.
        try store.transaction { transaction in
            #expect(try transaction.delete(ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"])) == 1)
            try transaction.add([item(account: "kept", service: "s", secret: "again")])
        }
        #expect(try secrets(store) == ["again"])
    }

    @Test(arguments: StoreKind.allCases)
    func aFailedOperationDoomsTheTransactionEvenWhenCaught(kind: StoreKind) throws {
        let (store, keep) = try kind.make()
        defer { withExtendedLifetime(keep) {} }
        try store.add([item(account: "taken", service: "s")])
        var laterError: (any Error)?
        #expect(throws: KeychainError.duplicateItem()) {
            try store.transaction { transaction in
                try transaction.add([item(account: "fresh", service: "s")])
                do {
                    try transaction.add([item(account: "taken", service: "s")])
                } catch {}
                do {
                    try transaction.add([item(account: "later", service: "s")])
                } catch {
                    laterError = error
                }
            }
        }
        #expect(laterError as? KeychainError == KeychainError.duplicateItem())
        let page = try store.find(all, limit: nil, after: nil, reading: .attributes)
        #expect(page.items.map { $0[.account] } == [.string("taken")])
    }

    @Test(arguments: StoreKind.allCases)
    func readsInsideSeeTheWritesBeforeThem(kind: StoreKind) throws {
        let (store, keep) = try kind.make()
        defer { withExtendedLifetime(keep) {} }
        let a = item(account: "a", service: "s", secret: "one")
        try store.add([a])
        let byA = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.service: .string("s"), .account: .string("a")])
        let byB = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.service: .string("s"), .account: .string("b")])
        #expect(try store.find(byA, limit: 1, after: nil, reading: .all).items.count == 1)  // cached before the transaction
        try store.transaction { transaction in
            try transaction.add([item(account: "b", service: "s", secret: "two")])
            #expect(try transaction.find(byB, limit: 1, after: nil, reading: .all).items.map { $0.secret?.utf8String() } == ["two"])
            _ = try transaction.update(byA, with: ItemChanges(secret: SecretBytes(utf8: "changed"), modificationDate: Date()))
            #expect(try transaction.find(byA, limit: 1, after: nil, reading: .all).items.map { $0.secret?.utf8String() } == ["changed"])
            #expect(try transaction.delete(byB) == 1)
            #expect(try transaction.find(byB, limit: nil, after: nil, reading: .all).items.isEmpty)
            // Re-keyed within the transaction: found under the new key only.
            _ = try transaction.update(byA, with: ItemChanges(attributes: [.account: .string("moved")], modificationDate: Date()))
            #expect(try transaction.find(byA, limit: nil, after: nil, reading: []).items.isEmpty)
            #expect(try secrets(transaction) == ["changed"])
        }
        #expect(try store.find(byA, limit: nil, after: nil, reading: []).items.isEmpty)
        let moved = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.service: .string("s"), .account: .string("moved")])
        #expect(try store.find(moved, limit: 1, after: nil, reading: .all).items.map { $0.secret?.utf8String() } == ["changed"])
    }

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
