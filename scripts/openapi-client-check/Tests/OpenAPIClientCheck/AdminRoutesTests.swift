import Foundation
import Testing

/// Client administration through the generated client: create, list, a token that works, the
/// client role kept out of admin routes, reissue (the old token stops working), revoke, and the
/// documented refusals (a duplicate name, an unknown client, the last admin).
@Suite struct AdminRoutesTests {
    @Test func clientsAreCreatedListedReissuedAndRevoked() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let admin = server.admin

        let created = try await admin.createClient(
            body: .json(.init(name: "billing-service", accessGroups: ["billing", "shared"], role: .client))
        ).created.body.json
        #expect(created.name == "billing-service" && created.accessGroups == ["billing", "shared"] && created.role == .client)
        #expect(created.token.hasPrefix("kc_") && created.token.count == 46)
        #expect(abs(created.createdAt.timeIntervalSinceNow) < 60)
        let clients = try await admin.listClients().ok.body.json.clients
        #expect(clients.map(\.name).sorted() == ["admin", "billing-service"])
        let listed = try #require(clients.first { $0.name == "billing-service" })
        #expect(listed.accessGroups == created.accessGroups && listed.role == .client && listed.createdAt == created.createdAt)
        #expect(clients.first { $0.name == "admin" }?.role == .admin)

        let billing = server.client(token: created.token)
        #expect(try await billing.findGenericPassword(query: .init(limit: "all")).notFound.body.json.answer.value1.error
            == "errSecItemNotFound")
        let forbidden = try await billing.listClients()
        expectError(try forbidden.forbidden.body.json, "errSecMissingEntitlement", -34018)
        let duplicate = try await admin.createClient(body: .json(.init(name: "billing-service", accessGroups: ["x"])))
        expectError(try duplicate.conflict.body.json, "errSecDuplicateItem", -25299)
        let repeatedGroup = try await admin.createClient(body: .json(.init(name: "twice", accessGroups: ["a", "a"])))
        expectError(try repeatedGroup.badRequest.body.json.answer, "errSecParam", -50)

        let reissued = try await admin.reissueToken(path: .init(name: "billing-service")).ok.body.json
        #expect(reissued.name == "billing-service" && reissued.token != created.token)
        let stale = try await billing.findGenericPassword(query: .init())
        let unauthorized = try stale.unauthorized
        #expect(unauthorized.headers.wwwAuthenticate == .bearer)
        expectError(try unauthorized.body.json, "errSecAuthFailed", -25293)
        let renewed = server.client(token: reissued.token)
        _ = try await renewed.findGenericPassword(query: .init()).notFound

        #expect(try await admin.revokeClient(path: .init(name: "billing-service")).ok.body.json.deleted == 1)
        _ = try await renewed.findGenericPassword(query: .init()).unauthorized
        let unknown = try await admin.revokeClient(path: .init(name: "billing-service"))
        expectError(try unknown.notFound.body.json.answer, "errSecItemNotFound", -25300)
        let unknownToken = try await admin.reissueToken(path: .init(name: "nobody"))
        expectError(try unknownToken.notFound.body.json.answer, "errSecItemNotFound", -25300)
        let lastAdmin = try await admin.revokeClient(path: .init(name: "admin"))
        expectError(try lastAdmin.badRequest.body.json, "errSecParam", -50)
    }
}
