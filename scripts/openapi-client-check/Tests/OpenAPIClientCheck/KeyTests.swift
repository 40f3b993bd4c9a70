import Foundation
import Testing

/// key through the generated client: its attributes (an input alias answered by its Apple name),
/// both ways of giving the key bytes, every return shape, updates and deletes.
@Suite struct KeyTests {
    @Test func addFindUpdateDelete() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let api = try await server.newClient(named: "crypto", accessGroups: ["crypto"])
        let tag = Fixtures.base64("com.example.key")

        let aes = try #require(
            try await api.addKey(
                body: .json(.KeyNewData(.init(
                    keyClass: .symmetric, applicationTag: tag, keyType: .aes, keySizeInBits: 256, canEncrypt: true,
                    data: Fixtures.aesKey)))
            ).created.body.json.item)
        #expect(aes.keyClass == .symmetric && aes.keyType == .aes && aes.keySizeInBits == 256)
        #expect(aes.applicationTag == tag && aes.canEncrypt == true && aes.data == nil)
        let aesRef = try #require(aes.persistentRef)
        // `ec` is an accepted alias: answers carry ecsecPrimeRandom.
        let ec = try #require(
            try await api.addKey(
                body: .json(.KeyNewText(.init(
                    label: "signing", keyClass: ._private, keyType: .ec, keySizeInBits: 256, canSign: true,
                    value: "not really a key")))
            ).created.body.json.item)
        #expect(ec.keyType == .ecsecPrimeRandom && ec.keyClass == ._private && ec.canSign == true)
        let ecRef = try #require(ec.persistentRef)

        let data = try #require(
            try await api.findKey(query: .init(keyClass: .symmetric, _return: "data")).ok.body.json.one)
        #expect(data.data == Fixtures.aesKey && data.keyClass == nil)
        let ref = try #require(try await api.findKey(query: .init(keyType: .ecdsa, _return: "ref")).ok.body.json.one)
        #expect(ref.persistentRef == ecRef)
        #expect(try await api.findKey(query: .init(applicationTag: tag, _return: "none")).ok.body.json.isStatusOnly)
        let all = try #require(try await api.findKey(query: .init(keySizeInBits: 256, limit: "all")).ok.body.json.many)
        #expect(Set(all.items.compactMap(\.persistentRef)) == [aesRef, ecRef])
        #expect(try await api.getKeyByRef(path: .init(persistentRef: aesRef)).ok.body.json.one == aes)

        #expect(
            try await api.updateKey(query: .init(label: "signing"), body: .json(.KeyChangesData(.init(canVerify: true))))
                .ok.body.json.updated == 1)
        #expect(
            try await api.updateKeyByRef(
                path: .init(persistentRef: ecRef), body: .json(.KeyChangesText(.init(value: "another key")))
            ).ok.body.json.updated == 1)
        let after = try #require(
            try await api.getKeyByRef(path: .init(persistentRef: ecRef), query: .init(_return: "attributes,data"))
                .ok.body.json.one)
        #expect(after.canVerify == true && after.canSign == true && after.value == "another key")

        #expect(try await api.deleteKeyByRef(path: .init(persistentRef: ecRef)).ok.body.json.deleted == 1)
        #expect(try await api.deleteKey(query: .init(applicationTag: tag)).ok.body.json.deleted == 1)
        let none = try await api.findKey(query: .init(limit: "all"))
        expectError(try none.notFound.body.json.answer, "errSecItemNotFound", -25300)
    }
}
