import Foundation
import KeychainAPI
import KeychainCore
import KeychainTestSupport
import Testing

@Suite struct IdentityTests {
    func identityBody(_ name: String, _ extra: [(String, JSONValue)] = []) -> [(String, JSONValue)] {
        [("certificate", .string(Base64.encode(StubCertificateParser.certificate(name)))),
         ("privateKey", .string(Base64.encode(Array("key-\(name)".utf8))))] + extra
    }

    @Test func addStoresCertificateAndPrivateKey() throws {
        let fixture = Fixture()
        let added = try fixture.add(.identity, identityBody("leaf", [("label", .string("me")), ("applicationTag", .string("AAE="))]))
        #expect(added.itemClass == .identity)
        #expect(fixture.count(.certificate) == 1)
        let keys = try fixture.find(.key, [("limit", .string("all"))])
        #expect(keys.count == 1)
        #expect(keys[0]["keyClass"] == .string("private"))
        #expect(keys[0]["applicationLabel"] == .string(Base64.encode(StubCertificateParser.hash(Array("leaf".utf8)))))
        #expect(keys[0]["applicationTag"] == .string("AAE="))
        #expect(keys[0]["label"] == .string("me"))
        #expect(status { try fixture.add(.identity, identityBody("leaf")) } == .duplicateItem)
        #expect(fixture.count(.key) == 1, "nothing half-added")
    }

    @Test func findJoinsCertificatesWithTheirPrivateKeys() throws {
        let fixture = Fixture()
        try fixture.add(.identity, identityBody("one"))
        try fixture.add(.certificate, [("data", .string(Base64.encode(StubCertificateParser.certificate("lonely"))))])
        let hash = Base64.encode(StubCertificateParser.hash(Array("two".utf8)))
        try fixture.add(.certificate, [("data", .string(Base64.encode(StubCertificateParser.certificate("two"))))])
        try fixture.add(.key, [("keyClass", .string("public")), ("applicationLabel", .string(hash))])
        let found = try fixture.find(.identity, [("limit", .string("all")), ("return", .string("attributes,data"))])
        #expect(found.count == 1)
        let names = found[0].answerNames(returning: [.attributes, .data])
        #expect(names.contains("key") && names.contains("certificate") && names.contains("privateKey"))
        #expect(found[0]["privateKey"] == .string(Base64.encode(Array("key-one".utf8))))
        try fixture.add(.key, [("keyClass", .string("private")), ("applicationLabel", .string(hash))])
        #expect(try fixture.find(.identity, [("limit", .string("all"))]).count == 2)
    }

    @Test func identityQueriesTakeKeyAndCertificateAttributes() throws {
        let fixture = Fixture()
        try fixture.add(.identity, identityBody("one", [("applicationTag", .string("AAE="))]))
        try fixture.add(.identity, identityBody("two", [("applicationTag", .string("AAI="))]))
        #expect(try fixture.find(.identity, [("applicationTag", .string("AAI="))]).first?["serialNumber"] == .string(Base64.encode(Array("two".utf8))))
        #expect(try fixture.find(.identity, [("serialNumber", .string(Base64.encode(Array("one".utf8))))]).count == 1)
    }

    @Test func deleteRemovesBothRows() throws {
        let fixture = Fixture()
        try fixture.add(.identity, identityBody("one"))
        #expect(try fixture.delete(.identity, [("all", .string("true"))]) == 1)
        #expect(fixture.count(.certificate) == 0 && fixture.count(.key) == 0)
    }

    // An update or a delete of several identities changes all of them in one store transaction, or none.

    func groups(_ fixture: Fixture, _ itemClass: ItemClass) throws -> [JSONValue?] {
        try fixture.find(itemClass, [("limit", .string("all"))]).map { $0["accessGroup"] }
    }

    /// Moving identities "a" and "b" into team.shared, where "b" is already: "b"'s certificate
    /// clashes after "a" has moved, and "a" stays where it was.
    @Test func anUpdateThatClashesOnALaterIdentityChangesNone() throws {
        let fixture = Fixture()
        try fixture.add(.identity, identityBody("a", [("label", .string("move"))]))
        try fixture.add(.identity, identityBody("b", [("label", .string("move"))]))
        try fixture.add(.identity, identityBody("b", [("accessGroup", .string("team.shared"))]))
        let before = (try groups(fixture, .certificate), try groups(fixture, .key))
        #expect(status {
            try fixture.update(.identity, [("label", .string("move"))], set: [("accessGroup", .string("team.shared"))])
        } == .duplicateItem)
        #expect(try groups(fixture, .certificate) == before.0)
        #expect(try groups(fixture, .key) == before.1)
    }

    @Test func aDeleteOfSeveralIdentitiesRemovesEveryRow() throws {
        let fixture = Fixture()
        try fixture.add(.identity, identityBody("a"))
        try fixture.add(.identity, identityBody("b"))
        #expect(try fixture.delete(.identity, [("all", .string("true"))]) == 2)
        #expect(fixture.count(.certificate) == 0 && fixture.count(.key) == 0)
    }
}
