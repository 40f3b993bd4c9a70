import Foundation
import KeychainCore
import Testing

/// `ItemStore.transaction`, held to the same conformance by every store: all or nothing, reads
/// inside see the writes before them, and primary keys are enforced against what the
/// transaction has written so far. Part of `ItemStoreConformance.run()`.
extension ItemStoreConformance {
    private var accessTokenFilter: ItemFilter {
        ItemFilter(
            itemClass: .genericPassword, accessGroups: ["g1"],
            equal: [.service: .string("api"), .account: .string("accessToken")])
    }

    private var refreshTokenFilter: ItemFilter {
        ItemFilter(
            itemClass: .genericPassword, accessGroups: ["g1"],
            equal: [.service: .string("api"), .account: .string("refreshToken")])
    }

    private func transactionSecrets(_ store: any ItemOperations) throws -> [String?] {
        try store.find(all, limit: nil, after: nil, reading: .all).items.map { $0.secret?.utf8String() }
    }

    package func deletesAndAddsCommitTogether() throws {
        let (store, keep) = try make()
        defer { withExtendedLifetime(keep) {} }
        try store.add([item(account: "accessToken", service: "api", secret: "old-access"), item(account: "other", service: "api", secret: "untouched")])
        // Replacing a pair: one old item deleted, two new ones added.
        let deleted = try store.transaction { transaction in
            let deleted = try transaction.delete(accessTokenFilter) + transaction.delete(refreshTokenFilter)
            try transaction.add([
                item(account: "accessToken", service: "api", secret: "new-access"),
                item(account: "refreshToken", service: "api", secret: "new-refresh"),
            ])
            return deleted
        }
        #expect(deleted == 1)
        #expect(try transactionSecrets(store) == ["untouched", "new-access", "new-refresh"])
        // A filter outside the groups deletes nothing.
        let foreign = ItemFilter(itemClass: .genericPassword, accessGroups: ["g2"], equal: [.service: .string("api")])
        #expect(try store.transaction { try $0.delete(foreign) } == 0)
        #expect(try transactionSecrets(store) == ["untouched", "new-access", "new-refresh"])
    }

    package func anErrorThrownByTheBodyUndoesEverything() throws {
        let (store, keep) = try make()
        defer { withExtendedLifetime(keep) {} }
        let a = item(account: "a", service: "s", label: "before", secret: "one")
        try store.add([a])
        #expect(throws: TransactionAbandoned()) {
            try store.transaction { transaction in
                try transaction.add([item(account: "b", service: "s", secret: "two")])
                _ = try transaction.update(
                    ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], persistentRef: a.persistentRef),
                    with: ItemChanges(attributes: [.label: .string("after")], secret: SecretBytes(utf8: "changed"), modificationDate: Date()))
                _ = try transaction.delete(ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.account: .string("a")]))
                throw TransactionAbandoned()
            }
        }
        let page = try store.find(all, limit: nil, after: nil, reading: .all)
        #expect(page.items.map(\.persistentRef) == [a.persistentRef])
        #expect(page.items.first?[.label] == .string("before"))
        #expect(page.items.first?.secret?.utf8String() == "one")
        // The store goes on as before.
        try store.add([item(account: "b", service: "s", secret: "two")])
        #expect(try transactionSecrets(store) == ["one", "two"])
    }

    package func aClashWithAnItemThatStaysUndoesEverything() throws {
        let (store, keep) = try make()
        defer { withExtendedLifetime(keep) {} }
        try store.add([item(account: "accessToken", service: "api", secret: "access"), item(account: "other", service: "api", secret: "untouched")])
        #expect(throws: KeychainError.duplicateItem()) {
            try store.transaction { transaction in
                _ = try transaction.delete(accessTokenFilter)
                try transaction.add([
                    item(account: "accessToken", service: "api", secret: "newer-access"),
                    item(account: "other", service: "api", secret: "clash"),
                ])
            }
        }
        #expect(try transactionSecrets(store) == ["access", "untouched"])
    }

    package func duplicatesAmongTheTransactionsOwnWritesUndoEverything() throws {
        let (store, keep) = try make()
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
        #expect(try transactionSecrets(store) == ["kept"])
        // A key the transaction deleted first is free again within it.
        try store.transaction { transaction in
            #expect(try transaction.delete(ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"])) == 1)
            try transaction.add([item(account: "kept", service: "s", secret: "again")])
        }
        #expect(try transactionSecrets(store) == ["again"])
    }

    package func aFailedOperationDoomsTheTransactionEvenWhenCaught() throws {
        let (store, keep) = try make()
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

    package func readsInsideSeeTheWritesBeforeThem() throws {
        let (store, keep) = try make()
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
            #expect(try transactionSecrets(transaction) == ["changed"])
        }
        #expect(try store.find(byA, limit: nil, after: nil, reading: []).items.isEmpty)
        let moved = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.service: .string("s"), .account: .string("moved")])
        #expect(try store.find(moved, limit: 1, after: nil, reading: .all).items.map { $0.secret?.utf8String() } == ["changed"])
    }
}

private struct TransactionAbandoned: Error, Equatable {}
