import Foundation
import Testing

/// The refresh-setting routes through the generated client, against a token endpoint on a
/// loopback port nobody listens on: PUT (admin only), GET, POST (the exchange fails: `failing`),
/// the 502 of a fetch with no valid token, DELETE, and the documented 404s.
@Suite struct RefreshRoutesTests {
    @Test func putGetRefreshNowDelete() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let admin = server.admin
        let client = try await server.newClient(named: "backend", accessGroups: ["admin"])
        let path = Operations.PutRefreshSetting.Input.Path(service: "m2m.example.com")
        let body = Components.Schemas.RefreshSettingInput(
            tokenEndpoint: "http://127.0.0.1:9/token", grant: .clientCredentials, clientId: "m2m",
            clientSecret: "s3cret", clientAuth: .post, scope: "read", refreshBefore: 30)

        let refused = try await client.putRefreshSetting(path: path, body: .json(.RefreshSettingInput(body)))
        expectError(try refused.forbidden.body.json, "errSecMissingEntitlement", -34018)

        let stored = try await admin.putRefreshSetting(path: path, body: .json(.RefreshSettingInput(body))).ok.body.json
        #expect(stored.service == "m2m.example.com" && stored.user == nil && stored.accessGroup == "admin")
        #expect(stored.grant == Components.Schemas.RefreshGrant.clientCredentials)
        #expect(stored.clientAuth == Components.Schemas.RefreshClientAuth.post && stored.scope == "read")
        #expect(stored.refreshBefore == 30 && stored.state == Components.Schemas.RefreshSetting.StatePayload.ok)
        #expect(stored.failures == 0 && stored.lastError == nil)

        let read = try await client.getRefreshSetting(path: .init(service: "m2m.example.com")).ok.body.json
        #expect(read.tokenEndpoint == "http://127.0.0.1:9/token")

        // Nobody listens there: the exchange fails and no valid token is stored.
        let now = try await client.refreshTokensNow(path: .init(service: "m2m.example.com")).ok.body.json
        #expect(now.state == Components.Schemas.RefreshSetting.StatePayload.failing)
        #expect(now.failures == 1 && now.lastError != nil && now.nextRefreshAt != nil)
        let failed = try await client.getAuthorization(path: .init(service: "m2m.example.com"))
        expectError(try failed.badGateway.body.json, "errSecServiceNotAvailable", -67585)

        #expect(try await admin.deleteRefreshSetting(path: .init(service: "m2m.example.com")).ok.body.json.deleted == 1)
        let gone = try await admin.getRefreshSetting(path: .init(service: "m2m.example.com"))
        expectError(try gone.notFound.body.json.answer, "errSecItemNotFound", -25300)
        let nothing = try await admin.deleteRefreshSetting(path: .init(service: "m2m.example.com"))
        expectError(try nothing.notFound.body.json.answer, "errSecItemNotFound", -25300)
    }
}
