import Foundation
import Testing

/// certificate through the generated client: attributes read from the DER, every return shape,
/// updates of its writable attributes, a duplicate and deletes.
@Suite struct CertificateTests {
    @Test func addFindUpdateDelete() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let api = try await server.newClient(named: "tls", accessGroups: ["tls"])

        let added = try #require(
            try await api.addCertificate(body: .json(.init(label: "example certificate", data: Fixtures.certificate)))
                .created.body.json.item)
        #expect(added.label == "example certificate" && added.accessGroup == "tls")
        #expect(added.certificateType == .x509v3 && added.certificateEncoding == .der)
        #expect(added.serialNumber == Fixtures.certificateSerialNumber)
        #expect(added.subject != nil && added.subject == added.issuer)  // self-signed
        #expect(added.publicKeyHash.flatMap { Data(base64Encoded: $0)?.count } == 20)  // SHA-1
        #expect(added.accessible == .always)
        let reference = try #require(added.persistentRef)

        let data = try #require(
            try await api.findCertificate(query: .init(serialNumber: Fixtures.certificateSerialNumber, _return: "data"))
                .ok.body.json.one)
        #expect(data.data == Fixtures.certificate && data.persistentRef == nil)
        let ref = try #require(try await api.findCertificate(query: .init(_return: "ref")).ok.body.json.one)
        #expect(ref.persistentRef == reference && ref.label == nil)
        #expect(try await api.findCertificate(query: .init(label: "example certificate", _return: "none")).ok.body.json.isStatusOnly)
        let all = try #require(try await api.findCertificate(query: .init(limit: "all")).ok.body.json.many)
        #expect(all.items == [added])
        #expect(try await api.getCertificateByRef(path: .init(persistentRef: reference)).ok.body.json.one == added)

        let duplicate = try await api.addCertificate(body: .json(.init(data: Fixtures.certificate)))
        expectError(try duplicate.conflict.body.json, "errSecDuplicateItem", -25299)

        #expect(
            try await api.updateCertificate(
                query: .init(serialNumber: Fixtures.certificateSerialNumber), body: .json(.init(label: "renamed"))
            ).ok.body.json.updated == 1)
        #expect(
            try await api.updateCertificateByRef(
                path: .init(persistentRef: reference), body: .json(.init(syncViewHint: "view"))
            ).ok.body.json.updated == 1)
        let after = try #require(try await api.getCertificateByRef(path: .init(persistentRef: reference)).ok.body.json.one)
        #expect(after.label == "renamed" && after.syncViewHint == "view" && after.serialNumber == added.serialNumber)

        #expect(try await api.deleteCertificate(query: .init(label: "renamed")).ok.body.json.deleted == 1)
        let gone = try await api.deleteCertificateByRef(path: .init(persistentRef: reference))
        expectError(try gone.notFound.body.json.answer, "errSecItemNotFound", -25300)
    }
}
