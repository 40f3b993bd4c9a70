import Foundation
import KeychainAPI
import KeychainCore
import KeychainTestSupport
import Testing

/// Issue 29, item 1, in the service: names that decide access compare by their bytes. `café`
/// precomposed (NFC) and decomposed (NFD) are two groups, as they are to SQLite and the AAD.
@Suite("Names compared byte for byte")
struct NameEquivalenceTests {
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"

    @Test func canonicallyEquivalentSpellingsAreDifferentNames() {
        #expect(Self.nfc == Self.nfd)  // Swift's `==`: why it may not decide access
        #expect(!Self.nfc.hasSameUTF8(as: Self.nfd))
        #expect(!"Kate".hasSameUTF8(as: "\u{212A}ate"))  // the Kelvin sign is canonically K
        #expect([Self.nfc].containsExactly(Self.nfc) && ![Self.nfc].containsExactly(Self.nfd))
        #expect(AttributeValue.string(Self.nfc) != .string(Self.nfd))
        // Filters are the find caches' keys: one group's must not stand for the other's.
        #expect(
            ItemFilter(itemClass: .genericPassword, accessGroups: [Self.nfc])
                != ItemFilter(itemClass: .genericPassword, accessGroups: [Self.nfd]))
        #expect(!ItemFilter(itemClass: .genericPassword, accessGroups: [Self.nfd]).matches(
            Item(itemClass: .genericPassword, persistentRef: .random(), attributes: [.accessGroup: .string(Self.nfc)], secret: nil)))
    }

    @Test func onlyNFCGroupsAreValid() {
        #expect(Client.isValidAccessGroup(Self.nfc))
        #expect(Client.isValidAccessGroup("team.app"))
        #expect(!Client.isValidAccessGroup(Self.nfd))
        #expect(!Client.isValidAccessGroup("\u{212A}"))  // NFC of the Kelvin sign is K
        #expect(!Client.isValidAccessGroup(""))
    }

    @Test func aClientOfOneSpellingReachesNothingOfTheOther() throws {
        let fixture = Fixture()
        let owner = Client(name: "owner", accessGroups: [Self.nfc], role: .client, createdAt: Date())
        let intruder = Client(name: "intruder", accessGroups: [Self.nfd], role: .client, createdAt: Date())
        try fixture.add([("service", .string("s")), ("value", .string("owner's"))], as: owner)
        let named = [("service", JSONValue.string("s")), ("accessGroup", .string(Self.nfc))]
        #expect(status { try fixture.find(named, as: intruder) } == .missingEntitlement)
        #expect(status { try fixture.update(named, set: [("label", .string("x"))], as: intruder) } == .missingEntitlement)
        #expect(status { try fixture.delete(named, as: intruder) } == .missingEntitlement)
        #expect(status { try fixture.add(named, as: intruder) } == .missingEntitlement)
        #expect(status { try fixture.find([("service", .string("s"))], as: intruder) } == .itemNotFound)
        #expect(
            status { try fixture.update([("service", .string("s"))], set: [("accessGroup", .string(Self.nfc))], as: intruder) }
                == .missingEntitlement)
        #expect(try fixture.find([("service", .string("s"))], as: owner).count == 1)
    }
}
