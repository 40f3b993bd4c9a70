import Foundation
public import KeychainCore
import Testing

/// What every `ItemStore` must do, checked with `#expect`: call `run()` from one test per backend
/// (the in-memory reference, SQLite in memory and on file, PostgreSQL).
///
/// `make` returns a new, empty store for each check (and whatever keeps it alive until the check
/// ends). The items are of access groups g1 and g2.
package struct ItemStoreConformance: Sendable {
    package typealias Factory = @Sendable () throws -> (store: any ItemStore, keepAlive: AnyObject?)

    let make: Factory

    package init(_ make: @escaping Factory) { self.make = make }

    /// Every check, each on a store of its own.
    package func run() throws {
        for check in Check.allCases { try run(check) }
    }

    /// The checks by name, for a test that runs each as a case of its own (in parallel, and
    /// reported by name).
    package enum Check: String, CaseIterable, Sendable {
        case addThenFindInCreationOrder
        case aFindReadsOnlyTheContentsItNames
        case everyAttributeOfEachClassRoundTrips
        case equalityValuesBindToTheirOwnAttributes
        case limitAndCursorPage
        case filtersOnAttributesGroupsAndPersistentRef
        case caseInsensitiveMatching
        case absentPrimaryKeyAttributesCollideAsDefaults
        case batchAddIsAllOrNothing
        case updateChangesEveryMatchAndKeepsDatesIncreasing
        case updateCausingDuplicateChangesNothing
        case updateMovingGroupKeepsSecretReadable
        case deleteAndCount
        case deletesAndAddsCommitTogether
        case anErrorThrownByTheBodyUndoesEverything
        case aClashWithAnItemThatStaysUndoesEverything
        case duplicatesAmongTheTransactionsOwnWritesUndoEverything
        case aFailedOperationDoomsTheTransactionEvenWhenCaught
        case readsInsideSeeTheWritesBeforeThem
    }

    /// One check, on a store of its own.
    package func run(_ check: Check) throws {
        switch check {
        case .addThenFindInCreationOrder: try addThenFindInCreationOrder()
        case .aFindReadsOnlyTheContentsItNames: try aFindReadsOnlyTheContentsItNames()
        case .everyAttributeOfEachClassRoundTrips: try everyAttributeOfEachClassRoundTrips()
        case .equalityValuesBindToTheirOwnAttributes: try equalityValuesBindToTheirOwnAttributes()
        case .limitAndCursorPage: try limitAndCursorPage()
        case .filtersOnAttributesGroupsAndPersistentRef: try filtersOnAttributesGroupsAndPersistentRef()
        case .caseInsensitiveMatching: try caseInsensitiveMatching()
        case .absentPrimaryKeyAttributesCollideAsDefaults: try absentPrimaryKeyAttributesCollideAsDefaults()
        case .batchAddIsAllOrNothing: try batchAddIsAllOrNothing()
        case .updateChangesEveryMatchAndKeepsDatesIncreasing: try updateChangesEveryMatchAndKeepsDatesIncreasing()
        case .updateCausingDuplicateChangesNothing: try updateCausingDuplicateChangesNothing()
        case .updateMovingGroupKeepsSecretReadable: try updateMovingGroupKeepsSecretReadable()
        case .deleteAndCount: try deleteAndCount()
        case .deletesAndAddsCommitTogether: try deletesAndAddsCommitTogether()
        case .anErrorThrownByTheBodyUndoesEverything: try anErrorThrownByTheBodyUndoesEverything()
        case .aClashWithAnItemThatStaysUndoesEverything: try aClashWithAnItemThatStaysUndoesEverything()
        case .duplicatesAmongTheTransactionsOwnWritesUndoEverything: try duplicatesAmongTheTransactionsOwnWritesUndoEverything()
        case .aFailedOperationDoomsTheTransactionEvenWhenCaught: try aFailedOperationDoomsTheTransactionEvenWhenCaught()
        case .readsInsideSeeTheWritesBeforeThem: try readsInsideSeeTheWritesBeforeThem()
        }
    }

    let all = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1", "g2"])

    package func addThenFindInCreationOrder() throws {
        let (store, keep) = try make()
        defer { withExtendedLifetime(keep) {} }
        let items = (0..<5).map { item(account: "a\($0)", service: "s", secret: "secret-\($0)") }
        try store.add(Array(items[0..<3]))
        try store.add(Array(items[3...]))
        let page = try store.find(all, limit: nil, after: nil, reading: .all)
        #expect(page.items.map(\.persistentRef) == items.map(\.persistentRef))
        #expect(page.items.map { $0.secret?.utf8String() } == (0..<5).map { "secret-\($0)" })
        #expect(page.next == nil)
        #expect(page.items[0][.account] == .string("a0"))
        #expect(page.items[0][.creationDate] == items[0][.creationDate])
        let withoutSecrets = try store.find(all, limit: nil, after: nil, reading: .attributes)
        #expect(withoutSecrets.items.allSatisfy { $0.secret == nil })
    }

    package func aFindReadsOnlyTheContentsItNames() throws {
        let (store, keep) = try make()
        defer { withExtendedLifetime(keep) {} }
        // Two groups, so that a secret opens only with its own group read alongside it.
        let items = [item(account: "a", group: "g1", secret: "one"), item(account: "b", group: "g2", secret: "two")]
        try store.add(items)
        for _ in 0..<3 {  // a repeated find is answered from the SQLite store's find cache
            let secrets = try store.find(all, limit: nil, after: nil, reading: .secret)
            #expect(secrets.items.map(\.persistentRef) == items.map(\.persistentRef))
            #expect(secrets.items.map { $0.secret?.utf8String() } == ["one", "two"])
            #expect(secrets.items.allSatisfy { $0.attributes.isEmpty && $0.itemClass == .genericPassword })
            let bare = try store.find(all, limit: 1, after: nil, reading: [])
            #expect(bare.items.map(\.persistentRef) == [items[0].persistentRef])
            #expect(bare.items.allSatisfy { $0.attributes.isEmpty && $0.secret == nil })
            #expect(bare.next != nil)
            let attributes = try store.find(all, limit: nil, after: nil, reading: .attributes)
            #expect(attributes.items.map { $0[.account] } == [.string("a"), .string("b")])
        }
    }

    package func everyAttributeOfEachClassRoundTrips() throws {
        let (store, keep) = try make()
        defer { withExtendedLifetime(keep) {} }
        let now = Date().truncatedToMilliseconds
        for itemClass in ItemClass.storedClasses {
            var attributes: [Attribute: AttributeValue] = [:]
            for attribute in Attribute.attributes(of: itemClass) {
                attributes[attribute] =
                    switch attribute.valueType {
                    case .string: .string("value of \(attribute.name)")
                    case .enumeration(let enumeration): .string(enumeration.values[0].name)
                    case .data: .data([1, 2, 3])
                    case .integer: .integer(42)
                    case .bool: .bool(true)
                    case .date: .date(now)
                    }
            }
            attributes[.accessGroup] = .string("g1")
            let stored = Item(itemClass: itemClass, persistentRef: .random(), attributes: attributes, secret: nil)
            try store.add([stored])
            let found = try store.find(
                ItemFilter(itemClass: itemClass, accessGroups: ["g1"]), limit: nil, after: nil, reading: .all)
            #expect(found.items.map(\.attributes) == [attributes], "\(itemClass)")
        }
    }

    package func equalityValuesBindToTheirOwnAttributes() throws {
        let (store, keep) = try make()
        defer { withExtendedLifetime(keep) {} }
        // Each item's service is the other's account: values bound to the wrong terms would swap them.
        let a = item(account: "y", service: "x")
        let b = item(account: "x", service: "y")
        try store.add([a, b])
        func refs(_ service: String, _ account: String, caseInsensitive: Bool = false) throws -> [PersistentRef] {
            let filter = ItemFilter(
                itemClass: .genericPassword, accessGroups: ["g1"],
                equal: [.service: .string(service), .account: .string(account)], caseInsensitive: caseInsensitive)
            return try store.find(filter, limit: 1, after: nil, reading: .attributes).items.map(\.persistentRef)
        }
        #expect(try refs("x", "y") == [a.persistentRef])
        #expect(try refs("y", "x") == [b.persistentRef])
        #expect(try refs("X", "Y").isEmpty)
        #expect(try refs("X", "Y", caseInsensitive: true) == [a.persistentRef])
        #expect(try refs("x", "y") == [a.persistentRef])
    }

    package func limitAndCursorPage() throws {
        let (store, keep) = try make()
        defer { withExtendedLifetime(keep) {} }
        let items = (0..<5).map { item(account: "a\($0)") }
        try store.add(items)
        var seen: [PersistentRef] = []
        var cursor: ItemCursor?
        var pages = 0
        repeat {
            let page = try store.find(all, limit: 2, after: cursor, reading: .attributes)
            seen += page.items.map(\.persistentRef)
            cursor = page.next
            pages += 1
        } while cursor != nil && pages < 10
        #expect(pages == 3)
        #expect(seen == items.map(\.persistentRef))
        let exact = try store.find(all, limit: 5, after: nil, reading: .attributes)
        #expect(exact.items.count == 5 && exact.next == nil)
    }

    package func filtersOnAttributesGroupsAndPersistentRef() throws {
        let (store, keep) = try make()
        defer { withExtendedLifetime(keep) {} }
        let a = item(account: "alice", service: "mail", label: "x")
        let b = item(account: "bob", service: "mail")
        let c = item(account: "alice", service: "mail", group: "g2")
        let key = item(.key, group: "g1", extra: [.applicationTag: .data([1, 2, 3])])
        try store.add([a, b, c, key])
        func refs(_ filter: ItemFilter) throws -> [PersistentRef] {
            try store.find(filter, limit: nil, after: nil, reading: .attributes).items.map(\.persistentRef)
        }
        #expect(try refs(ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"])) == [a.persistentRef, b.persistentRef])
        #expect(try refs(ItemFilter(itemClass: .genericPassword, accessGroups: ["g2"])) == [c.persistentRef])
        #expect(try refs(ItemFilter(itemClass: .genericPassword, accessGroups: ["g3"])) == [])
        #expect(
            try refs(ItemFilter(itemClass: .genericPassword, accessGroups: ["g1", "g2"], equal: [.account: .string("alice")]))
                == [a.persistentRef, c.persistentRef])
        #expect(
            try refs(ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.label: .string("x")]))
                == [a.persistentRef])
        // An absent attribute matches its default.
        #expect(
            try refs(ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.label: .string("")]))
                == [b.persistentRef])
        #expect(
            try refs(ItemFilter(itemClass: .genericPassword, accessGroups: ["g1", "g2"], persistentRef: b.persistentRef))
                == [b.persistentRef])
        #expect(
            try refs(ItemFilter(itemClass: .genericPassword, accessGroups: ["g2"], persistentRef: b.persistentRef)) == [])
        #expect(
            try refs(ItemFilter(itemClass: .key, accessGroups: ["g1"], equal: [.applicationTag: .data([1, 2, 3])]))
                == [key.persistentRef])
        #expect(try refs(ItemFilter(itemClass: .key, accessGroups: ["g1"], equal: [.applicationTag: .data([1])])) == [])
    }

    package func caseInsensitiveMatching() throws {
        let (store, keep) = try make()
        defer { withExtendedLifetime(keep) {} }
        let a = item(account: "Alice", service: "Mail")
        try store.add([a])
        let exact = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.account: .string("alice")])
        #expect(try store.find(exact, limit: nil, after: nil, reading: .attributes).items.isEmpty)
        var folded = exact
        folded.caseInsensitive = true
        #expect(try store.find(folded, limit: nil, after: nil, reading: .attributes).items.count == 1)

        // Case folding is Unicode's, not ASCII's, in every store.
        try store.add([item(account: "ÉCOLE", service: "Straße")])
        let unicode = ItemFilter(
            itemClass: .genericPassword, accessGroups: ["g1"],
            equal: [.account: .string("école"), .service: .string("STRAßE")],
            caseInsensitive: true)
        #expect(try store.find(unicode, limit: nil, after: nil, reading: .attributes).items.count == 1)
    }

    package func absentPrimaryKeyAttributesCollideAsDefaults() throws {
        let (store, keep) = try make()
        defer { withExtendedLifetime(keep) {} }
        try store.add([item()])
        #expect(throws: KeychainError.duplicateItem()) { try store.add([item()]) }
        // An explicit default equals an absent attribute.
        #expect(throws: KeychainError.duplicateItem()) {
            try store.add([item(account: "", service: "", extra: [.synchronizable: .bool(false)])])
        }
        // Another group, another sync flag, or a non-PK difference only: group/sync distinguish.
        try store.add([item(group: "g2")])
        try store.add([item(extra: [.synchronizable: .bool(true)])])
        #expect(throws: KeychainError.duplicateItem()) { try store.add([item(label: "different label")]) }
        // Other classes have their own key.
        try store.add([item(.internetPassword), item(.key), item(.certificate)])
        #expect(throws: KeychainError.duplicateItem()) { try store.add([item(.internetPassword)]) }
        #expect(throws: KeychainError.duplicateItem()) {
            try store.add([item(.certificate, extra: [.issuer: .data([]), .serialNumber: .data([])])])
        }
    }

    package func batchAddIsAllOrNothing() throws {
        let (store, keep) = try make()
        defer { withExtendedLifetime(keep) {} }
        try store.add([item(account: "taken")])
        #expect(throws: KeychainError.duplicateItem()) {
            try store.add([item(account: "new1"), item(account: "taken")])
        }
        #expect(throws: KeychainError.duplicateItem()) {
            try store.add([item(account: "new2"), item(account: "new2")])
        }
        let page = try store.find(all, limit: nil, after: nil, reading: .attributes)
        #expect(page.items.map { $0[.account] } == [.string("taken")])
    }

    package func updateChangesEveryMatchAndKeepsDatesIncreasing() throws {
        let (store, keep) = try make()
        defer { withExtendedLifetime(keep) {} }
        let future = Date(millisecondsSince1970: Date().millisecondsSince1970 + 60_000)
        let a = item(account: "a", service: "svc", extra: [.modificationDate: .date(future)])
        let b = item(account: "b", service: "svc")
        let other = item(account: "c", service: "other")
        try store.add([a, b, other])
        let now = Date(millisecondsSince1970: Date().millisecondsSince1970 + 5)  // after b's creation
        let changes = ItemChanges(
            attributes: [.label: .string("new"), .comment: .string("c")], secret: SecretBytes(utf8: "rotated"),
            modificationDate: now)
        let count = try store.update(
            ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.service: .string("svc")]),
            with: changes)
        #expect(count == 2)
        let page = try store.find(all, limit: nil, after: nil, reading: .all)
        #expect(page.items.map { $0[.label] } == [.string("new"), .string("new"), nil])
        #expect(page.items.map { $0.secret?.utf8String() } == ["rotated", "rotated", "secret"])
        #expect(page.items[0][.modificationDate] == .date(Date(millisecondsSince1970: future.millisecondsSince1970 + 1)))
        #expect(page.items[1][.modificationDate] == .date(now))
        #expect(page.items[0][.creationDate] == a[.creationDate])
        // Removing an attribute with nil.
        #expect(try store.update(
            ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], persistentRef: b.persistentRef),
            with: ItemChanges(attributes: [.comment: nil], modificationDate: now)) == 1)
        let updatedB = try store.find(
            ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], persistentRef: b.persistentRef),
            limit: nil, after: nil, reading: .attributes)
        #expect(updatedB.items.first?[.comment] == nil)
        #expect(updatedB.items.first?[.label] == .string("new"))
        // No match: 0 and nothing changed.
        #expect(try store.update(
            ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.service: .string("none")]),
            with: changes) == 0)
    }

    package func updateCausingDuplicateChangesNothing() throws {
        let (store, keep) = try make()
        defer { withExtendedLifetime(keep) {} }
        let a = item(account: "a", service: "svc", label: "la")
        let b = item(account: "b", service: "svc", label: "lb")
        try store.add([a, b])
        // One match moves onto the other's key.
        #expect(throws: KeychainError.duplicateItem()) {
            try store.update(
                ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.account: .string("a")]),
                with: ItemChanges(attributes: [.account: .string("b"), .label: .string("x")], modificationDate: Date()))
        }
        // Both matches get the same key (the first row is changed before the second clashes).
        #expect(throws: KeychainError.duplicateItem()) {
            try store.update(
                ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"]),
                with: ItemChanges(
                    attributes: [.account: .string("same"), .label: .string("y")], secret: SecretBytes(utf8: "z"),
                    modificationDate: Date()))
        }
        let page = try store.find(all, limit: nil, after: nil, reading: .all)
        #expect(page.items.map { $0[.account] } == [.string("a"), .string("b")])
        #expect(page.items.map { $0[.label] } == [.string("la"), .string("lb")])
        #expect(page.items.map { $0.secret?.utf8String() } == ["secret", "secret"])
        #expect(page.items.map { $0[.modificationDate] } == [a[.modificationDate], b[.modificationDate]])
    }

    package func updateMovingGroupKeepsSecretReadable() throws {
        let (store, keep) = try make()
        defer { withExtendedLifetime(keep) {} }
        let a = item(account: "a", secret: "kept")
        try store.add([a])
        #expect(try store.update(
            ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"]),
            with: ItemChanges(attributes: [.accessGroup: .string("g2")], modificationDate: Date())) == 1)
        let page = try store.find(all, limit: nil, after: nil, reading: .all)
        #expect(page.items.first?.accessGroup == "g2")
        #expect(page.items.first?.secret?.utf8String() == "kept")
    }

    package func deleteAndCount() throws {
        let (store, keep) = try make()
        defer { withExtendedLifetime(keep) {} }
        try store.add([
            item(account: "a", service: "svc"), item(account: "b", service: "svc"), item(account: "c"),
            item(account: "a", service: "svc", group: "g2"), item(.internetPassword), item(.key),
        ])
        var counts = try store.countByClass()
        #expect(counts == [.genericPassword: 4, .internetPassword: 1, .certificate: 0, .key: 1])
        let deleted = try store.delete(
            ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.service: .string("svc")]))
        #expect(deleted == 2)
        #expect(try store.delete(ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.service: .string("svc")])) == 0)
        counts = try store.countByClass()
        #expect(counts[.genericPassword] == 2)
        let left = try store.find(all, limit: nil, after: nil, reading: .attributes)
        #expect(left.items.map { $0[.account] } == [.string("c"), .string("a")])
        // A deleted key can be added again.
        try store.add([item(account: "a", service: "svc")])
    }
}

/// A test item: creation and modification dates now (to the millisecond), in `group`.
public func item(
    _ itemClass: ItemClass = .genericPassword, account: String? = nil, service: String? = nil,
    group: String = "g1", label: String? = nil, secret: String? = "secret",
    extra: [Attribute: AttributeValue] = [:]
) -> Item {
    var attributes: [Attribute: AttributeValue] = [.accessGroup: .string(group)]
    if let account { attributes[.account] = .string(account) }
    if let service { attributes[.service] = .string(service) }
    if let label { attributes[.label] = .string(label) }
    let now = Date().truncatedToMilliseconds
    attributes[.creationDate] = .date(now)
    attributes[.modificationDate] = .date(now)
    for (key, value) in extra { attributes[key] = value }
    return Item(
        itemClass: itemClass, persistentRef: .random(), attributes: attributes,
        secret: secret.map { SecretBytes(utf8: $0) })
}
