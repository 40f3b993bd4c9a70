import Foundation
import KeychainTestSupport
import KeychainCore
import Testing
@testable import KeychainStore
@testable import KeychainPostgreSQL

/// The items table's SQL on PostgreSQL, with opaque bytes standing for sealed secrets (sealing is
/// the store's).
@Suite("PostgreSQL items table")
struct PGItemTableTests {
    private func migrated() throws -> PGConnection {
        let db = try PGTestDatabase().connect()
        try PGMigrations.apply(on: db)
        return db
    }

    private func find(
        _ filter: ItemFilter, after cursor: Int64? = nil, limit: Int? = nil, contents: ItemContents = .attributes,
        on db: PGConnection
    ) throws -> [PGItemTable.Row] {
        try PGItemTable.rows(filter, after: cursor, limit: limit, contents: contents, on: db)
    }

    @Test func everyAttributeOfEachClassRoundTripsWithItsSealedSecret() throws {
        let db = try migrated()
        let now = Date().truncatedToMilliseconds
        for itemClass in ItemClass.storedClasses {
            var attributes: [Attribute: AttributeValue] = [:]
            for attribute in Attribute.attributes(of: itemClass) {
                switch attribute.valueType {
                case .string, .enumeration: attributes[attribute] = .string("v-\(attribute.name)-ü")
                case .data: attributes[attribute] = .data([0, 1, 2, 255])
                case .integer: attributes[attribute] = .integer(-42)
                case .bool: attributes[attribute] = .bool(true)
                case .date: attributes[attribute] = .date(now)
                }
            }
            let stored = Item(itemClass: itemClass, persistentRef: .random(), attributes: attributes, secret: nil)
            #expect(try PGItemTable.insert(stored, sealedSecret: [9, 8, 7], on: db) != nil)
            let group = attributes[.accessGroup].flatMap { if case .string(let g) = $0 { g } else { nil } } ?? ""
            let rows = try find(ItemFilter(itemClass: itemClass, accessGroups: [group]), contents: .all, on: db)
            #expect(rows.map(\.item.attributes) == [attributes])
            #expect(rows.map(\.item.persistentRef) == [stored.persistentRef])
            #expect(rows.map(\.sealedSecret) == [[9, 8, 7]])
            #expect(rows.map(\.accessGroup) == [group])
        }
    }

    @Test func aDuplicateInsertsNothingAndLeavesTheTransactionUsable() throws {
        let db = try migrated()
        let first = item(account: "a", service: "s")
        let (firstSeq, clash, other) = try db.transaction {
            (
                try PGItemTable.insert(first, sealedSecret: nil, on: db),
                try PGItemTable.insert(item(account: "a", service: "s"), sealedSecret: nil, on: db),
                try PGItemTable.insert(item(account: "b", service: "s"), sealedSecret: nil, on: db)
            )
        }
        #expect(firstSeq != nil && clash == nil && other != nil)
        // Absent primary-key attributes collide with their defaults; the group is part of the key.
        #expect(try PGItemTable.insert(item(), sealedSecret: nil, on: db) != nil)
        #expect(try PGItemTable.insert(item(account: "", service: ""), sealedSecret: nil, on: db) == nil)
        #expect(try PGItemTable.insert(item(group: "g2"), sealedSecret: nil, on: db) != nil)
    }

    @Test func findsFilterByGroupReferenceAndAttributesAndPageBySequence() throws {
        let db = try migrated()
        let items = (0..<5).map { item(account: "a\($0)", service: $0 % 2 == 0 ? "even" : "odd", group: $0 < 4 ? "g1" : "g2") }
        let seqs = try items.map { try PGItemTable.insert($0, sealedSecret: nil, on: db)! }
        let both = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1", "g2"])
        #expect(try find(both, on: db).map(\.seq) == seqs)
        #expect(try find(ItemFilter(itemClass: .genericPassword, accessGroups: ["g2"]), on: db).map(\.seq) == [seqs[4]])
        var even = both
        even.equal = [.service: .string("even")]
        #expect(try find(even, on: db).map(\.item.persistentRef) == [items[0], items[2], items[4]].map(\.persistentRef))
        var byRef = both
        byRef.persistentRef = items[3].persistentRef
        #expect(try find(byRef, on: db).map(\.seq) == [seqs[3]])
        #expect(try find(both, after: seqs[1], limit: 2, on: db).map(\.seq) == [seqs[2], seqs[3]])
        #expect(try find(both, limit: 0, on: db).isEmpty)
        // Without attributes or secret asked for, neither is read.
        #expect(try find(both, contents: [], on: db).allSatisfy { $0.item.attributes.isEmpty && $0.sealedSecret == nil })
        #expect(try find(ItemFilter(itemClass: .internetPassword, accessGroups: ["g1"]), on: db).isEmpty)
    }

    @Test func caseInsensitiveMatchingFoldsUnicode() throws {
        let db = try migrated()
        _ = try PGItemTable.insert(item(account: "ÉCOLE", service: "Straße"), sealedSecret: nil, on: db)
        var filter = ItemFilter(
            itemClass: .genericPassword, accessGroups: ["g1"],
            equal: [.account: .string("école"), .service: .string("STRAßE")])
        #expect(try find(filter, on: db).isEmpty)
        filter.caseInsensitive = true
        #expect(try find(filter, on: db).count == 1)
    }

    @Test func anUpdateCausingADuplicateFailsWithUniqueViolationAndDeleteCountsMatches() throws {
        let db = try migrated()
        let a = try PGItemTable.insert(item(account: "a"), sealedSecret: nil, on: db)!
        _ = try PGItemTable.insert(item(account: "b"), sealedSecret: nil, on: db)
        let error = #expect(throws: PostgreSQLError.self) {
            try db.transaction {
                try PGItemTable.update(a, attributes: [(.account, .string("b"))], modificationDate: 1, sealedSecret: nil, on: db)
            }
        }
        #expect(error?.sqlState == .uniqueViolation)
        let all = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"])
        #expect(try find(all, on: db).map { $0.item[.account] } == [.string("a"), .string("b")])
        try PGItemTable.update(a, attributes: [(.account, nil)], modificationDate: 7, sealedSecret: [1], on: db)
        let updated = try find(all, contents: .all, on: db)[0]
        #expect(updated.item[.account] == nil && updated.sealedSecret == [1])
        #expect(updated.item[.modificationDate] == .date(Date(millisecondsSince1970: 7)))
        #expect(try PGItemTable.countByClass(on: db)[.genericPassword] == 2)
        #expect(try PGItemTable.delete(all, on: db).count == 2)
        #expect(try PGItemTable.countByClass(on: db)[.genericPassword] == 0)
    }
}

@Suite("PostgreSQL items table: long values")
struct PGItemTableLongValueTests {
    @Test func attributesPastTheBTreeEntryLimitAreStoredFoundAndStillUnique() throws {
        let db = try PGTestDatabase().connect()
        try PGMigrations.apply(on: db)
        let long = String(repeating: "x", count: 10_000)
        let stored = item(account: long, service: long, extra: [.generic: .data(Array(repeating: 7, count: 10_000))])
        #expect(try PGItemTable.insert(stored, sealedSecret: nil, on: db) != nil)
        #expect(try PGItemTable.insert(item(account: long, service: long), sealedSecret: nil, on: db) == nil)
        #expect(try PGItemTable.insert(item(account: long + "y", service: long), sealedSecret: nil, on: db) != nil)
        let filter = ItemFilter(
            itemClass: .genericPassword, accessGroups: ["g1"], equal: [.account: .string(long), .service: .string(long)])
        let rows = try PGItemTable.rows(filter, after: nil, limit: nil, contents: .attributes, on: db)
        #expect(rows.map(\.item.persistentRef) == [stored.persistentRef])
        #expect(rows.first?.item[.generic] == .data(Array(repeating: 7, count: 10_000)))
    }

    @Test func aLookupByServiceAndAccountUsesTheClasssLookupIndex() throws {
        let db = try PGTestDatabase().connect()
        try PGMigrations.apply(on: db)
        let filter = PGItemFilter(
            ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], equal: [.account: .string("a"), .service: .string("s")]))
        try db.executeScript("SET enable_seqscan = off")
        let plan = try db.execute("EXPLAIN SELECT seq FROM items WHERE \(filter.whereClause) ORDER BY seq", filter.values)
        let text = (0..<plan.count).map { plan.text($0, 0) }.joined(separator: "\n")
        // The digests are the index condition: the scan seeks, it does not read the whole index.
        #expect(text.contains(ItemColumns.lookupIndexName(.genericPassword)) && text.contains("Index Cond: ((text_digest"), "\(text)")
    }
}
