import Foundation
import KeychainAPI
import KeychainCore
import KeychainTestSupport
import Testing

/// Vault's KV version 2 rules (`KVService`) over the in-memory store, and how a KV secret's item
/// meets the native item routes.
@Suite struct KVServiceTests {
    let fixture = Fixture()
    var kv: KVService { KVService(store: fixture.store, clock: fixture.service.clock) }
    /// The fixture's items as the server's service sees them: with the JSON check of KV data.
    var items: KeychainService {
        KeychainService(
            store: fixture.store, certificateParser: StubCertificateParser(), cursors: .forTests,
            clock: fixture.service.clock, kvDataCheck: KVRequest.checkData)
    }
    let key = KVSecretKey(group: "team.app", path: "db/primary")

    static func data(_ text: String) -> SecretBytes { SecretBytes(utf8: text) }
    static func text(_ secret: SecretBytes?) -> String? { secret?.utf8String() }

    @Test func versionsGrowAndEachStaysReadable() throws {
        try kv.write(key, data: Self.data(#"{"password":"one"}"#), cas: nil)
        let second = try kv.write(key, data: Self.data(#"{"password":"two"}"#), cas: nil)
        #expect(second.version.number == 2 && second.metadata.currentVersion == 2)
        #expect(Self.text(try kv.read(key)?.version.data) == #"{"password":"two"}"#)
        #expect(Self.text(try kv.read(key, version: 1)?.version.data) == #"{"password":"one"}"#)
        #expect(try kv.read(key, version: 3) == nil)
        #expect(try kv.read(KVSecretKey(group: "team.app", path: "nothing")) == nil)
    }

    @Test func checkAndSet() throws {
        #expect(throws: KVRefusal.self) { try kv.write(key, data: Self.data("{}"), cas: 1) }
        try kv.write(key, data: Self.data(#"{"a":1}"#), cas: 0)
        #expect(throws: KVRefusal.self) { try kv.write(key, data: Self.data("{}"), cas: 0) }
        try kv.write(key, data: Self.data(#"{"a":2}"#), cas: 1)
        try kv.writeMetadata(.init(casRequired: true), of: key)
        do {
            try kv.write(key, data: Self.data("{}"), cas: nil)
            Issue.record("a write without cas went through on a secret that requires it")
        } catch let refusal as KVRefusal {
            #expect(refusal.message == "check-and-set parameter required for this call")
        }
        #expect(try kv.read(key)?.version.number == 2)
    }

    @Test func maxVersionsTrimsTheOldest() throws {
        try kv.writeMetadata(.init(maxVersions: 2), of: key)
        try kv.write(key, data: Self.data(#"{"n":1}"#), cas: nil)
        #expect(try kv.metadata(key)?.metadata.oldestVersion == 0)
        // Full but nothing removed yet: OpenBao says 1 already.
        try kv.write(key, data: Self.data(#"{"n":2}"#), cas: nil)
        #expect(try kv.metadata(key)?.metadata.oldestVersion == 1)
        try kv.write(key, data: Self.data(#"{"n":3}"#), cas: nil)
        let found = try #require(try kv.metadata(key))
        #expect(found.metadata.oldestVersion == 2)
        #expect(found.versions.map(\.number) == [2, 3])
        #expect(try kv.read(key, version: 1) == nil)
        #expect(throws: KeychainError.self) { try kv.writeMetadata(.init(maxVersions: 101), of: key) }
    }

    @Test func softDeleteUndeleteAndDestroy() throws {
        try kv.write(key, data: Self.data(#"{"v":1}"#), cas: nil)
        try kv.write(key, data: Self.data(#"{"v":2}"#), cas: nil)
        try kv.change(.delete, versions: nil, of: key)
        let deleted = try #require(try kv.read(key))
        #expect(!deleted.isLive && deleted.version.data == nil && deleted.version.deletionTime != nil)
        try kv.change(.undelete, versions: [2], of: key)
        #expect(Self.text(try kv.read(key)?.version.data) == #"{"v":2}"#)
        try kv.change(.destroy, versions: [1, 7], of: key)
        let destroyed = try #require(try kv.read(key, version: 1))
        #expect(destroyed.version.destroyed && !destroyed.isLive)
        try kv.change(.undelete, versions: [1], of: key)
        #expect(try kv.read(key, version: 1)?.isLive == false)
    }

    @Test func deleteVersionAfterCountsAVersionDeletedOnceItPasses() throws {
        try kv.writeMetadata(.init(deleteVersionAfter: 1), of: key)
        try kv.write(key, data: Self.data("{}"), cas: nil)
        #expect(try kv.read(key)?.isLive == true)
        // The fixture's clock moves 1.5 ms per reading.
        for _ in 0..<700 { _ = fixture.service.clock() }
        #expect(try kv.read(key)?.isLive == false)
    }

    @Test func patchMergesIntoTheCurrentVersion() throws {
        #expect(try kv.patch(key, cas: nil, merge: { $0 }) == nil)
        try kv.write(key, data: Self.data(#"{"user":"gus","password":"x"}"#), cas: nil)
        let patch = try KVRequest.Patch(Array(#"{"data":{"password":"y","user":null,"extra":{"a":1}}}"#.utf8))
        let written = try #require(try kv.patch(key, cas: 1, merge: patch.merged(into:)))
        #expect(written.version.number == 2)
        #expect(Self.text(try kv.read(key)?.version.data) == #"{"password":"y","extra":{"a":1}}"#)
    }

    @Test func listsOneLevelWithFolders() throws {
        for path in ["a", "b/c", "b/d/e", "b-x", "c/"] where !path.hasSuffix("/") {
            try kv.write(KVSecretKey(group: "team.app", path: path), data: Self.data("{}"), cas: nil)
        }
        try kv.write(KVSecretKey(group: "team.shared", path: "z"), data: Self.data("{}"), cas: nil)
        #expect(try kv.list(group: "team.app", folder: "") == ["a", "b-x", "b/"])
        #expect(try kv.list(group: "team.app", folder: "b/") == ["c", "d/"])
        #expect(try kv.list(group: "team.app", folder: "q/").isEmpty)
    }

    @Test func pathsAreCheckedAndTokensReserved() throws {
        for path in ["", "a//b", "a/", "tokens", "tokens/github"] {
            #expect(throws: KeychainError.self) {
                try kv.write(KVSecretKey(group: "team.app", path: path), data: Self.data("{}"), cas: nil)
            }
        }
        // Data that is no JSON object never reaches the rules: the API layer refuses it.
        #expect(throws: KeychainError.self) { try KVRequest.Write(Array(#"{"data":[1]}"#.utf8)) }
        #expect(throws: KeychainError.self) {
            try kv.writeMetadata(.init(customMetadata: [String(repeating: "k", count: 129): "v"]), of: key)
        }
        let many = Dictionary(uniqueKeysWithValues: (0..<65).map { ("k\($0)", "v") })
        #expect(throws: KeychainError.self) { try kv.writeMetadata(.init(customMetadata: many), of: key) }
    }

    // MARK: - The item

    @Test func theItemHoldsTheCurrentVersion() throws {
        try kv.write(key, data: Self.data(#"{"v":1}"#), cas: nil)
        var found = try fixture.find(.genericPassword, [("service", .string("db/primary")), ("return", .string("data"))])
        #expect(Self.text(found.first?.item.secret) == #"{"v":1}"#)
        try kv.change(.delete, versions: nil, of: key)
        found = try fixture.find(.genericPassword, [("service", .string("db/primary")), ("return", .string("data"))])
        #expect(found.first?.item.secret?.isEmpty == true)
        try kv.remove(key)
        #expect(try kv.metadata(key) == nil)
        #expect(throws: KeychainError.self) {
            try fixture.find(.genericPassword, [("service", .string("db/primary"))])
        }
    }

    @Test func aNativeUpdateWritesAVersionAndADeleteRemovesTheHistory() throws {
        try kv.write(key, data: Self.data(#"{"v":1}"#), cas: nil)
        let query = try fixture.query(.genericPassword, [("service", .string("db/primary"))], .update)
        try items.update(query, with: ItemUpdate(attributes: [:], secret: Self.data(#"{"v":2}"#)), client: fixture.app)
        #expect(try kv.read(key)?.version.number == 2)
        #expect(throws: KeychainError.self) {
            try items.update(query, with: ItemUpdate(attributes: [:], secret: Self.data("not json")), client: fixture.app)
        }
        #expect(throws: KeychainError.self) {
            try items.update(query, with: ItemUpdate(attributes: [.service: .string("moved")], secret: nil), client: fixture.app)
        }
        // Without the JSON check (a service not wired for KV), no native data update goes through.
        #expect(throws: KeychainError.self) {
            try fixture.service.update(query, with: ItemUpdate(attributes: [:], secret: Self.data("{}")), client: fixture.app)
        }
        try kv.writeMetadata(.init(casRequired: true), of: key)
        #expect(throws: KeychainError.self) {
            try items.update(query, with: ItemUpdate(attributes: [:], secret: Self.data("{}")), client: fixture.app)
        }
        #expect(try kv.read(key)?.version.number == 2)
        let delete = try fixture.query(.genericPassword, [("service", .string("db/primary"))], .delete)
        try items.delete(delete, client: fixture.app)
        #expect(try kv.metadata(key) == nil)
    }

    @Test func noNativeWriteSetsTheMarkerAndANativeItemKeepsItsPath() throws {
        #expect(throws: KeychainError.self) {
            try fixture.add(.genericPassword, [("service", .string("x")), ("generic", .string(Base64.encode(Array("keychaind.kv".utf8))))])
        }
        try fixture.add(.genericPassword, [("service", .string("native")), ("account", .string(""))])
        #expect(throws: KVRefusal.self) {
            try kv.write(KVSecretKey(group: "team.app", path: "native"), data: Self.data("{}"), cas: nil)
        }
        #expect(try kv.metadata(KVSecretKey(group: "team.app", path: "native")) == nil)
    }
}
