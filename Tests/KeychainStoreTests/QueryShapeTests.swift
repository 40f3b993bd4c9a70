import KeychainCore
import KeychainTestSupport
import Testing
@testable import KeychainStore
@testable import KeychainSQLite

@Suite("Query shapes")
struct QueryShapeTests {
    func key(
        _ equal: [Attribute: AttributeValue] = [.service: .string("s"), .account: .string("a")],
        groups: [String] = ["g1"], caseInsensitive: Bool = false, persistentRef: PersistentRef? = nil,
        limit: Int? = 1, after: ItemCursor? = nil, reading contents: ItemContents = .all
    ) -> FindCache.Key {
        FindCache.Key(
            filter: ItemFilter(
                itemClass: .genericPassword, accessGroups: groups, equal: equal, caseInsensitive: caseInsensitive,
                persistentRef: persistentRef),
            limit: limit, after: after, contents: contents)
    }

    @Test func findsDifferingOnlyInValuesShareAShape() {
        let shape = FindShape(key())
        #expect(FindShape(key([.service: .string("other"), .account: .string("b")], groups: ["g2"], limit: 9)) == shape)
        #expect(FindShape(key(caseInsensitive: true, after: ItemCursor(afterSequence: 3)))
            == FindShape(key([.service: .string("t"), .account: .string("b")], caseInsensitive: true, after: ItemCursor(afterSequence: 7))))
    }

    @Test func everyPartOfTheSQLIsInTheShape() {
        let shapes = [
            FindShape(key()),
            FindShape(key([.service: .string("s")])),
            FindShape(key([.service: .string("s"), .label: .string("a")])),
            FindShape(key(groups: ["g1", "g2"])),
            FindShape(key(caseInsensitive: true)),
            FindShape(key(persistentRef: .random())),
            FindShape(key(limit: nil)),
            FindShape(key(after: ItemCursor(afterSequence: 1))),
            FindShape(key(reading: .attributes)),
            FindShape(key(reading: .secret)),
            FindShape(key(reading: [])),
        ]
        #expect(Set(shapes).count == shapes.count)
        #expect(Set(shapes.map(\.sql)).count == shapes.count)
        // A case-insensitive filter folds strings only.
        #expect(FindShape(key([.synchronizable: .bool(false)], caseInsensitive: true))
            == FindShape(key([.synchronizable: .bool(true)])))
    }

    @Test func aFindSelectsItsClassColumnsOnly() {
        let sql = FindShape(key()).sql
        #expect(sql.contains("\"service\"") && sql.contains("\"account\""))
        #expect(!sql.contains("\"server\""), "an internet password's column: \(sql)")
        let columns = ItemTable.columnsByClass[.genericPassword]!
        #expect(columns.attributes == Attribute.attributes(of: .genericPassword))
    }

    @Test func aFindSelectsOnlyTheContentsItReads() {
        let dataOnly = FindShape(key(reading: .secret)).sql
        #expect(dataOnly.hasPrefix("SELECT seq, class, persistent_ref, ifnull(\"accessGroup\", ''), secret FROM"), "\(dataOnly)")
        let bare = FindShape(key(reading: [])).sql
        #expect(bare.hasPrefix("SELECT seq, class, persistent_ref FROM"), "\(bare)")
        let attributesOnly = FindShape(key(reading: .attributes)).sql
        #expect(attributesOnly.contains("\"account\"") && !attributesOnly.contains("secret"), "\(attributesOnly)")
    }

    @Test func oneStatementPerShapeOnAConnection() throws {
        let fixture = try VaultFixture()
        try fixture.vault.items.add([item(account: "a", service: "s"), item(account: "b", service: "s")])
        for account in ["a", "b", "c", "a"] {
            let filter = ItemFilter(
                itemClass: .genericPassword, accessGroups: ["g1"], equal: [.service: .string("s"), .account: .string(account)])
            let found = try fixture.vault.items.find(filter, limit: 1, after: nil, reading: .all)
            #expect(found.items.map { $0[.account] } == (account == "c" ? [] : [.string(account)]))
        }
        // The reads ran on one reader connection (one thread, returned after each read).
        let prepared = try fixture.vault.sqlitePool!.read { $0.preparedFindCount }
        #expect(prepared == 1)
    }
}
