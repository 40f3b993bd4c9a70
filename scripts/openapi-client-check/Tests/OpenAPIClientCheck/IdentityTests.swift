import Foundation
import Testing

/// identity through the generated client: a certificate joined with its private key, answered
/// with the key's attributes nested under `key`, every return shape, updates and deletes.
@Suite struct IdentityTests {
    @Test func addFindUpdateDelete() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let api = try await server.newClient(named: "mtls", accessGroups: ["mtls"])

        let identity = try #require(
            try await api.addIdentity(
                body: .json(.init(
                    label: "example identity", certificate: Fixtures.identityCertificate,
                    privateKey: Fixtures.identityPrivateKey)))
                .created.body.json.item)
        #expect(identity.label == "example identity" && identity.certificateType == .x509v3)
        let reference = try #require(identity.persistentRef)
        let key = try #require(identity.key)
        #expect(key.keyClass == ._private)
        #expect(key.applicationLabel == identity.publicKeyHash)
        #expect(key.persistentRef != reference)

        let data = try #require(
            try await api.findIdentity(query: .init(label: "example identity", _return: "data")).ok.body.json.one)
        #expect(data.certificate == Fixtures.identityCertificate && data.privateKey == Fixtures.identityPrivateKey)
        #expect(data.key == nil && data.persistentRef == nil)
        let ref = try #require(try await api.findIdentity(query: .init(_return: "ref")).ok.body.json.one)
        #expect(ref.persistentRef == reference && ref.certificate == nil)
        #expect(try await api.findIdentity(query: .init(keyClass: ._private, _return: "none")).ok.body.json.isStatusOnly)
        let all = try #require(try await api.findIdentity(query: .init(limit: "all")).ok.body.json.many)
        #expect(all.items == [identity])
        #expect(try await api.getIdentityByRef(path: .init(persistentRef: reference)).ok.body.json.one == identity)

        #expect(
            try await api.updateIdentity(query: .init(label: "example identity"), body: .json(.init(label: "renamed")))
                .ok.body.json.updated >= 1)
        #expect(
            try await api.updateIdentityByRef(path: .init(persistentRef: reference), body: .json(.init(tokenID: "token")))
                .ok.body.json.updated >= 1)
        let after = try #require(try await api.getIdentityByRef(path: .init(persistentRef: reference)).ok.body.json.one)
        #expect(after.label == "renamed" && after.tokenID == "token")

        #expect(try await api.deleteIdentityByRef(path: .init(persistentRef: reference)).ok.body.json.deleted >= 1)
        let gone = try await api.findIdentity(query: .init(limit: "all"))
        expectError(try gone.notFound.body.json.answer, "errSecItemNotFound", -25300)
        #expect(try await api.deleteIdentity(query: .init(all: true)).notFound.body.json.answer.value1.error == "errSecItemNotFound")
    }
}
