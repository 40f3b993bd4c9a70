import Foundation
import KeychainAPI
import KeychainCore
import KeychainTestSupport
import Testing

@Suite struct AddTests {
    @Test func defaultsFillGroupAccessibilitySyncAndDates() throws {
        let fixture = Fixture()
        let added = try fixture.add([("service", .string("api")), ("account", .string("me")), ("value", .string("pw"))])
        #expect(added["accessGroup"] == .string("team.app"), "the client's first group")
        #expect(added["accessible"] == .string("whenUnlocked"))
        #expect(added["synchronizable"] == .bool(false))
        guard case .string(let created)? = added["creationDate"] else { Issue.record("no creationDate"); return }
        #expect(created.hasSuffix("Z") && created.count == 24)
        #expect(added["creationDate"] == added["modificationDate"])
        #expect(PersistentRef(added.persistentRef.rawValue) != nil)
        #expect(added["value"] == .string("pw"))
        #expect(added["data"] == .string("cHc="))
    }

    @Test func addWithoutDataStoresEmptyData() throws {
        let fixture = Fixture()
        try fixture.add([("service", .string("s"))])
        let found = try fixture.find([("service", .string("s")), ("return", .string("data"))])
        #expect(found.first?.answerNames(returning: .data) == ["data", "value"])
        #expect(found.first?["data"] == .string(""))
    }

    @Test func explicitGroupMustBeTheClients() throws {
        let fixture = Fixture()
        #expect(status { try fixture.add([("accessGroup", .string("team.other"))]) } == .missingEntitlement)
        let added = try fixture.add([("accessGroup", .string("team.shared"))])
        #expect(added["accessGroup"] == .string("team.shared"))
    }

    @Test func clientWithoutGroupsIsRefusedEverywhere() throws {
        let fixture = Fixture()
        let client = fixture.groupless
        #expect(status { try fixture.add([("service", .string("s"))], as: client) } == .missingEntitlement)
        #expect(status { try fixture.find([("service", .string("s"))], as: client) } == .missingEntitlement)
        #expect(status { try fixture.update([("service", .string("s"))], set: [("label", .string("l"))], as: client) } == .missingEntitlement)
        #expect(status { try fixture.delete([("service", .string("s"))], as: client) } == .missingEntitlement)
    }

    struct CollisionCase: Sendable, CustomTestStringConvertible {
        let itemClass: ItemClass
        let first: [(String, JSONValue)]
        let second: [(String, JSONValue)]
        let collides: Bool
        let testDescription: String
    }

    static let inet: [(String, JSONValue)] = [
        ("server", .string("example.com")), ("port", .integer(8080)), ("path", .string("/p")),
        ("securityDomain", .string("d")), ("protocol", .string("https")), ("authenticationType", .string("httpBasic")),
        ("account", .string("me")),
    ]

    static let collisions: [CollisionCase] = [
        CollisionCase(itemClass: .genericPassword, first: [("service", .string("s")), ("account", .string("a"))],
                      second: [("service", .string("s")), ("account", .string("a")), ("value", .string("x"))],
                      collides: true, testDescription: "same service+account"),
        CollisionCase(itemClass: .genericPassword, first: [], second: [], collides: true,
                      testDescription: "absent account and service take defaults and collide"),
        CollisionCase(itemClass: .genericPassword, first: [("service", .string("s")), ("label", .string("one"))],
                      second: [("service", .string("s")), ("label", .string("two"))], collides: true,
                      testDescription: "label is not part of the key"),
        CollisionCase(itemClass: .genericPassword, first: [("service", .string("s")), ("generic", .string("AAE="))],
                      second: [("service", .string("s")), ("generic", .string("AAI="))], collides: true,
                      testDescription: "generic is not part of the key"),
        CollisionCase(itemClass: .genericPassword, first: [("service", .string("s")), ("account", .string("accessToken"))],
                      second: [("service", .string("s")), ("account", .string("refreshToken"))], collides: false,
                      testDescription: "token naming fix: different accounts"),
        CollisionCase(itemClass: .genericPassword, first: [("service", .string("s"))],
                      second: [("service", .string("s")), ("accessGroup", .string("team.shared"))], collides: false,
                      testDescription: "the group is part of the key"),
        CollisionCase(itemClass: .genericPassword, first: [("service", .string("s"))],
                      second: [("service", .string("s")), ("synchronizable", .bool(true))], collides: false,
                      testDescription: "synchronizable is part of the key"),
        CollisionCase(itemClass: .internetPassword, first: inet, second: inet, collides: true,
                      testDescription: "inet same key"),
        CollisionCase(itemClass: .internetPassword, first: inet,
                      second: inet.map { $0.0 == "port" ? ("port", .integer(443)) : $0 }, collides: false,
                      testDescription: "inet port differs"),
        CollisionCase(itemClass: .internetPassword, first: inet,
                      second: inet.map { $0.0 == "protocol" ? ("protocol", .string("http")) : $0 }, collides: false,
                      testDescription: "inet protocol differs"),
        CollisionCase(itemClass: .key, first: [("applicationTag", .string("AAE=")), ("keyType", .string("rsa"))],
                      second: [("applicationTag", .string("AAE=")), ("keyType", .string("rsa")), ("label", .string("x"))],
                      collides: true, testDescription: "keys same tag and type"),
        CollisionCase(itemClass: .key, first: [("applicationTag", .string("AAE=")), ("keyType", .string("rsa"))],
                      second: [("applicationTag", .string("AAE=")), ("keyType", .string("ec"))],
                      collides: false, testDescription: "keys differ in type"),
        CollisionCase(itemClass: .certificate, first: [("data", .string(Base64.encode(StubCertificateParser.certificate("a"))))],
                      second: [("data", .string(Base64.encode(StubCertificateParser.certificate("a")))), ("label", .string("l"))],
                      collides: true, testDescription: "same certificate"),
        CollisionCase(itemClass: .certificate, first: [("data", .string(Base64.encode(StubCertificateParser.certificate("a"))))],
                      second: [("data", .string(Base64.encode(StubCertificateParser.certificate("b"))))],
                      collides: false, testDescription: "other serial number"),
    ]

    @Test(arguments: collisions)
    func primaryKeyCollisions(_ testCase: CollisionCase) throws {
        let fixture = Fixture()
        try fixture.add(testCase.itemClass, testCase.first)
        let result = status { try fixture.add(testCase.itemClass, testCase.second) }
        #expect(result == (testCase.collides ? .duplicateItem : nil))
        #expect(fixture.count(testCase.itemClass, [("synchronizable", .string("any"))]) == (testCase.collides ? 1 : 2))
    }

    @Test func foreignGroupsNeverCollide() throws {
        let fixture = Fixture()
        try fixture.add([("service", .string("s"))], as: fixture.stranger)
        try fixture.add([("service", .string("s"))])
    }

    @Test func certificatesAreParsedAndDefaultToAlways() throws {
        let fixture = Fixture()
        let added = try fixture.add(.certificate, [("data", .string(Base64.encode(StubCertificateParser.certificate("leaf"))))])
        #expect(added["accessible"] == .string("always"))
        #expect(added["certificateType"] == .string("x509v3"))
        #expect(added["certificateEncoding"] == .string("der"))
        #expect(added["serialNumber"] == .string(Base64.encode(Array("leaf".utf8))))
        #expect(added["publicKeyHash"] == .string(Base64.encode(StubCertificateParser.hash(Array("leaf".utf8)))))
        #expect(status { try fixture.add(.certificate, [("data", .string("AAEC"))]) } == .param)
        #expect(status { try fixture.add(.certificate, []) } == .param)
    }

    @Test func thisDeviceOnlyCannotBeSynchronizable() {
        let fixture = Fixture()
        #expect(status {
            try fixture.add([("accessible", .string("whenUnlockedThisDeviceOnly")), ("synchronizable", .bool(true))])
        } == .param)
    }

    /// The service's own checks, for callers that build a NewItem without the API's decoder.
    @Test func typedRequestsAreCheckedByTheService() {
        let fixture = Fixture()
        let foreign = NewItem(itemClass: .genericPassword, attributes: [.server: .string("x")])
        #expect(throws: KeychainError.noSuchAttr("\"server\" is not an attribute of genericPassword")) {
            try fixture.service.add(foreign, client: fixture.app)
        }
        let readOnly = NewItem(itemClass: .genericPassword, attributes: [.creationDate: .date(Fixture.start)])
        #expect(throws: KeychainError.param("\"creationDate\" is read-only")) {
            try fixture.service.add(readOnly, client: fixture.app)
        }
    }
}

@Suite struct CopyMatchingTests {
    func seeded(pageSize: Int = 1000) throws -> Fixture {
        let fixture = Fixture(pageSize: pageSize)
        for account in ["a1", "a2", "a3", "a4", "a5"] {
            try fixture.add([("service", .string("svc")), ("account", .string(account)), ("value", .string("pw-\(account)"))])
        }
        try fixture.add([("service", .string("other")), ("account", .string("a1"))])
        return fixture
    }

    func accounts(_ items: [FoundItem]) -> [String] {
        items.compactMap { if case .string(let text)? = $0["account"] { text } else { nil } }
    }

    @Test func noMatchIsItemNotFound() throws {
        let fixture = try seeded()
        #expect(status { try fixture.find([("service", .string("nope"))]) } == .itemNotFound)
    }

    @Test func limitShapes() throws {
        let fixture = try seeded()
        #expect(accounts(try fixture.find([("service", .string("svc"))])) == ["a1"], "default limit one, creation order")
        #expect(accounts(try fixture.find([("service", .string("svc")), ("limit", .string("1"))])) == ["a1"])
        #expect(accounts(try fixture.find([("service", .string("svc")), ("limit", .string("3"))])) == ["a1", "a2", "a3"])
        #expect(accounts(try fixture.find([("service", .string("svc")), ("limit", .string("all"))])) == ["a1", "a2", "a3", "a4", "a5"])
        #expect(accounts(try fixture.find([("service", .string("svc")), ("limit", .string("10"))])).count == 5)
        #expect(accounts(try fixture.find([("limit", .string("all"))])).count == 6, "no attribute: the whole class")
    }

    @Test func matchingIsExactUnlessCaseInsensitive() throws {
        let fixture = try seeded()
        #expect(status { try fixture.find([("service", .string("SVC"))]) } == .itemNotFound)
        #expect(accounts(try fixture.find([("service", .string("SVC")), ("caseInsensitive", .string("true"))])) == ["a1"])
        try fixture.add([("service", .string("Straße")), ("account", .string("Ünïcode"))])
        #expect(accounts(try fixture.find([("service", .string("STRASSE".lowercased() == "strasse" ? "straße" : "")),
                                           ("account", .string("üNÏCODE")), ("caseInsensitive", .string("true"))])) == ["Ünïcode"])
    }

    @Test func pagesCarryANextCursor() throws {
        let fixture = try seeded(pageSize: 2)
        var query = try fixture.query([("service", .string("svc")), ("limit", .string("all"))])
        var seen: [String] = []
        var pages = 0
        while true {
            let result = try fixture.service.copyMatching(query, client: fixture.app)
            seen += accounts(result.items)
            pages += 1
            guard let next = result.next else { break }
            query = try fixture.query([("service", .string("svc")), ("limit", .string("all")), ("cursor", .string(next.token))])
        }
        #expect(seen == ["a1", "a2", "a3", "a4", "a5"])
        #expect(pages == 3)
    }

    @Test func numericLimitAcrossPages() throws {
        let fixture = try seeded(pageSize: 2)
        let first = try fixture.service.copyMatching(fixture.query([("service", .string("svc")), ("limit", .string("3"))]), client: fixture.app)
        #expect(accounts(first.items) == ["a1", "a2"])
        let cursor = try #require(first.next)
        let second = try fixture.service.copyMatching(
            fixture.query([("service", .string("svc")), ("limit", .string("3")), ("cursor", .string(cursor.token))]), client: fixture.app)
        #expect(accounts(second.items) == ["a3"])
        #expect(second.next == nil)
        let exact = try fixture.service.copyMatching(fixture.query([("service", .string("svc")), ("limit", .string("2"))]), client: fixture.app)
        #expect(exact.next == nil, "the limit, not the page, ends the list")
    }

    @Test func synchronizableIsImplicitlyFalse() throws {
        let fixture = Fixture()
        try fixture.add([("service", .string("s")), ("synchronizable", .bool(true))])
        #expect(status { try fixture.find([("service", .string("s"))]) } == .itemNotFound)
        #expect(try fixture.find([("service", .string("s")), ("synchronizable", .string("true"))]).count == 1)
        try fixture.add([("service", .string("s"))])
        #expect(try fixture.find([("service", .string("s")), ("synchronizable", .string("any")), ("limit", .string("all"))]).count == 2)
    }

    @Test func returnShapes() throws {
        let fixture = try seeded()
        // An admin's: a client's generic-password find reads attributes to spot a kept refresh token.
        let admin = Client(name: "root", accessGroups: fixture.app.accessGroups, role: .admin, createdAt: Date())
        let dataOnly = try #require(
            try fixture.find([("service", .string("svc")), ("return", .string("data"))], as: admin).first)
        #expect(dataOnly.answerNames(returning: .data) == ["data", "value"])
        #expect(dataOnly.item.attributes.isEmpty, "a search returning data only reads no attributes")
        let item = try #require(try fixture.find([("service", .string("svc")), ("return", .string("attributes,data"))]).first)
        #expect(item.answerNames(returning: .data) == ["data", "value"])
        #expect(item.answerNames(returning: .ref) == ["persistentRef"])
        let attributes = item.answerNames(returning: .attributes)
        #expect(attributes.contains("account") && attributes.contains("persistentRef") && !attributes.contains("data"))
        #expect(!attributes.contains("class"))
        #expect(item.answerNames(returning: .none).isEmpty)
        try fixture.add([("service", .string("bin")), ("data", .string("/w=="))])
        let binary = try #require(try fixture.find([("service", .string("bin")), ("return", .string("data"))]).first)
        #expect(binary.answerNames(returning: .data) == ["data"], "no value for bytes that are not UTF-8")
    }

    @Test func byPersistentReference() throws {
        let fixture = try seeded()
        let added = try fixture.add([("service", .string("ref"))])
        let query = try ItemQuery(decoding: [], of: .genericPassword, for: .copyMatching, persistentRef: added.persistentRef.rawValue)
        #expect(try fixture.service.copyMatching(query, client: fixture.app).items.first?.persistentRef == added.persistentRef)
        let wrongClass = try ItemQuery(decoding: [], of: .internetPassword, for: .copyMatching, persistentRef: added.persistentRef.rawValue)
        #expect(status { try fixture.service.copyMatching(wrongClass, client: fixture.app) } == .itemNotFound)
        #expect(status { try fixture.service.copyMatching(query, client: fixture.stranger) } == .itemNotFound)
        #expect(status {
            try ItemQuery(
                decoding: [QueryParameter(name: "service", value: "x")], of: .genericPassword, for: .copyMatching,
                persistentRef: added.persistentRef.rawValue)
        } == .param)
    }
}

@Suite struct IsolationTests {
    /// app: team.app + team.shared; other: team.other + team.shared; stranger: team.stranger.
    func seeded() throws -> Fixture {
        let fixture = Fixture()
        try fixture.add([("service", .string("s")), ("account", .string("app"))], as: fixture.app)
        try fixture.add([("service", .string("s")), ("account", .string("shared")), ("accessGroup", .string("team.shared"))], as: fixture.app)
        try fixture.add([("service", .string("s")), ("account", .string("other"))], as: fixture.other)
        try fixture.add([("service", .string("s")), ("account", .string("stranger"))], as: fixture.stranger)
        return fixture
    }

    @Test func eachClientSeesItsGroupsOnly() throws {
        let fixture = try seeded()
        #expect(fixture.count([("service", .string("s"))], as: fixture.app) == 2)
        #expect(fixture.count([("service", .string("s"))], as: fixture.other) == 2)
        #expect(fixture.count([("service", .string("s"))], as: fixture.stranger) == 1)
        #expect(status { try fixture.find([("account", .string("other"))], as: fixture.app) } == .itemNotFound)
    }

    @Test func namingAForeignGroupIsMissingEntitlement() throws {
        let fixture = try seeded()
        #expect(status { try fixture.find([("accessGroup", .string("team.other"))], as: fixture.app) } == .missingEntitlement)
        #expect(status { try fixture.update([("accessGroup", .string("team.other"))], set: [("label", .string("x"))], as: fixture.app) } == .missingEntitlement)
        #expect(status { try fixture.delete([("accessGroup", .string("team.other"))], as: fixture.app) } == .missingEntitlement)
        #expect(fixture.count([("accessGroup", .string("team.shared"))], as: fixture.other) == 1)
    }

    @Test func updatesAndDeletesStayInside() throws {
        let fixture = try seeded()
        #expect(try fixture.update([("service", .string("s"))], set: [("label", .string("mine"))], as: fixture.app) == 2)
        #expect(status { try fixture.update([("account", .string("stranger"))], set: [("label", .string("x"))], as: fixture.app) } == .itemNotFound)
        #expect(try fixture.delete([("service", .string("s"))], as: fixture.stranger) == 1)
        #expect(fixture.count([("service", .string("s"))], as: fixture.other) == 2)
        let otherItems = try fixture.find([("service", .string("s")), ("limit", .string("all"))], as: fixture.other)
        #expect(otherItems.filter { $0["label"] == .string("mine") }.count == 1, "only the shared item was relabelled")
    }

    @Test func movingToAForeignGroupIsRefused() throws {
        let fixture = try seeded()
        #expect(status { try fixture.update([("account", .string("app"))], set: [("accessGroup", .string("team.other"))]) } == .missingEntitlement)
        #expect(try fixture.update([("account", .string("app"))], set: [("accessGroup", .string("team.shared"))]) == 1)
        #expect(fixture.count([("accessGroup", .string("team.shared"))], as: fixture.other) == 2)
    }
}

@Suite struct UpdateTests {
    @Test func updatesEveryMatchAndTouchesModificationDate() throws {
        let fixture = Fixture()
        let first = try fixture.add([("service", .string("s")), ("account", .string("a")), ("value", .string("1"))])
        try fixture.add([("service", .string("s")), ("account", .string("b")), ("value", .string("1"))])
        #expect(try fixture.update([("service", .string("s"))], set: [("value", .string("2"))]) == 2)
        let items = try fixture.find([("service", .string("s")), ("limit", .string("all")), ("return", .string("attributes,data"))])
        #expect(items.map { $0["value"] } == [.string("2"), .string("2")])
        let updated = items[0]
        #expect(updated["creationDate"] == first["creationDate"])
        guard case .string(let before)? = first["modificationDate"], case .string(let after)? = updated["modificationDate"] else {
            Issue.record("dates missing")
            return
        }
        #expect(after > before)
    }

    @Test func clashIsDuplicateAndChangesNothing() throws {
        let fixture = Fixture()
        try fixture.add([("service", .string("s")), ("account", .string("a")), ("label", .string("A"))])
        try fixture.add([("service", .string("s")), ("account", .string("b")), ("label", .string("B"))])
        #expect(status { try fixture.update([("service", .string("s"))], set: [("account", .string("c"))]) } == .duplicateItem)
        #expect(status { try fixture.update([("account", .string("a"))], set: [("account", .string("b")), ("label", .string("X"))]) } == .duplicateItem)
        let labels = try fixture.find([("service", .string("s")), ("limit", .string("all"))]).map { $0["label"] }
        #expect(labels == [.string("A"), .string("B")])
    }

    @Test func noMatchIsItemNotFound() throws {
        let fixture = Fixture()
        #expect(status { try fixture.update([("service", .string("s"))], set: [("value", .string("x"))]) } == .itemNotFound)
    }

    @Test func emptyUpdateIsParam() throws {
        let fixture = Fixture()
        try fixture.add([("service", .string("s"))])
        #expect(status { try fixture.update([("service", .string("s"))], set: []) } == .param)
    }

    @Test func seedUpsertFlow() throws {
        // seed 000 setValue: CopyMatching(no result) → Update or Add.
        let fixture = Fixture()
        func setValue(_ value: String, for account: String) throws {
            let query: [(String, JSONValue)] = [("service", .string("someService")), ("account", .string(account))]
            switch status({ try fixture.service.copyMatching(fixture.query(query + [("return", .string("none"))]), client: fixture.app) }) {
            case nil: _ = try fixture.update(query, set: [("value", .string(value))])
            case .itemNotFound?: try fixture.add([("service", .string("someService")), ("account", .string(account)), ("value", .string(value))])
            case let other?: throw KeychainError(other)
            }
        }
        try setValue("pwd_1234", for: "genericPassword")
        try setValue("pwd_1235", for: "genericPassword")
        let item = try fixture.find([("service", .string("someService")), ("account", .string("genericPassword")), ("return", .string("attributes,data"))])
        #expect(item.first?["value"] == .string("pwd_1235"))
        #expect(fixture.count() == 1)
    }
}

@Suite struct DeleteTests {
    @Test func deletesEveryMatch() throws {
        let fixture = Fixture()
        try fixture.add([("service", .string("s")), ("account", .string("a"))])
        try fixture.add([("service", .string("s")), ("account", .string("b"))])
        try fixture.add([("service", .string("t")), ("account", .string("a"))])
        #expect(try fixture.delete([("service", .string("s"))]) == 2)
        #expect(fixture.count() == 1)
        #expect(status { try fixture.delete([("service", .string("s"))]) } == .itemNotFound)
    }

    @Test func namingNothingNeedsAll() throws {
        let fixture = Fixture()
        try fixture.add([("service", .string("s"))])
        try fixture.add([("service", .string("t")), ("synchronizable", .bool(true))])
        #expect(status { try fixture.delete([]) } == .param)
        #expect(fixture.count([("synchronizable", .string("any"))]) == 2)
        #expect(try fixture.delete([("all", .string("true"))]) == 1, "still only non-synchronizable items")
        #expect(try fixture.delete([("synchronizable", .string("any"))]) == 1)
    }
}
