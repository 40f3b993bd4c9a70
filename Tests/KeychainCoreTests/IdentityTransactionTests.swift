import KeychainCore
import KeychainTestSupport
import Testing

/// An identity is two items (its certificate and its private key): an update or a delete of
/// several identities changes all of them in one store transaction, or none.
@Suite struct IdentityTransactionTests {
    func identityBody(_ name: String, _ extra: [(String, WireValue)] = []) -> [(String, WireValue)] {
        [("certificate", .string(Base64.encode(StubCertificateParser.certificate(name)))),
         ("privateKey", .string(Base64.encode(Array("key-\(name)".utf8))))] + extra
    }

    func groups(_ fixture: Fixture, _ itemClass: ItemClass) throws -> [WireValue?] {
        try fixture.find(itemClass, [("limit", .text("all"))]).map { $0["accessGroup"] }
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
            try fixture.update(.identity, [("label", .text("move"))], set: [("accessGroup", .string("team.shared"))])
        } == .duplicateItem)
        #expect(try groups(fixture, .certificate) == before.0)
        #expect(try groups(fixture, .key) == before.1)
    }

    @Test func aDeleteOfSeveralIdentitiesRemovesEveryRow() throws {
        let fixture = Fixture()
        try fixture.add(.identity, identityBody("a"))
        try fixture.add(.identity, identityBody("b"))
        #expect(try fixture.delete(.identity, [("all", .text("true"))]) == 2)
        #expect(fixture.count(.certificate) == 0 && fixture.count(.key) == 0)
    }
}
