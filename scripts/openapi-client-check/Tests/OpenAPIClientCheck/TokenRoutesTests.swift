import Foundation
import Testing

/// The auth-token routes through the generated client: PUT with each way of giving the expiry
/// (and none, which answers a null `expiresAt`), GET, the Authorization header, per-user tokens,
/// another access group, an expired token, DELETE, and the documented 404s.
@Suite struct TokenRoutesTests {
    @Test func putGetAuthorizeDelete() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let api = try await server.newClient(named: "oauth", accessGroups: ["oauth", "shared"])
        let service = Operations.PutTokens.Input.Path(service: "api.example.com")

        let first = try await api.putTokens(
            path: service,
            body: .json(.TokenUpdateExpiresIn(.init(accessToken: "eyJ.first", refreshToken: "refresh-1", expiresIn: 3600)))
        ).ok.body.json
        #expect(first.replaced == 0)
        let expiresAt = try #require(first.expiresAt)
        #expect(abs(expiresAt.timeIntervalSinceNow - 3600) < 60)
        let tokens = try await api.getTokens(path: .init(service: "api.example.com")).ok.body.json
        #expect(tokens.accessToken == "eyJ.first" && tokens.refreshToken == "refresh-1")
        #expect(tokens.expiresAt == expiresAt && !tokens.expired)
        let authorization = try await api.getAuthorization(path: .init(service: "api.example.com")).ok.body.json
        #expect(authorization.authorization == "Bearer eyJ.first")
        // They are generic passwords, in the client's group.
        let items = try #require(
            try await api.findGenericPassword(query: .init(service: "api.example.com", limit: "all")).ok.body.json.many)
        #expect(Set(items.items.compactMap(\.account)) == ["accessToken", "refreshToken"])

        // The expiry as a date; no refreshToken in the body keeps the stored one.
        let second = try await api.putTokens(
            path: service,
            body: .json(.TokenUpdateExpiresAt(.init(accessToken: "eyJ.second", expiresAt: "2100-01-01T00:00:00Z")))
        ).ok.body.json
        #expect(second.replaced == 1)
        #expect(second.expiresAt == Date(timeIntervalSince1970: 4_102_444_800))
        // No expiry: `expiresAt` is null in both answers.
        let third = try await api.putTokens(path: service, body: .json(.TokenUpdateExpiresIn(.init(accessToken: "eyJ.third"))))
            .ok.body.json
        #expect(third.replaced == 1 && third.expiresAt == nil)
        let kept = try await api.getTokens(path: .init(service: "api.example.com")).ok.body.json
        #expect(kept.accessToken == "eyJ.third" && kept.refreshToken == "refresh-1" && kept.expiresAt == nil && !kept.expired)

        // Per user: its own pair, beside the service's.
        _ = try await api.putTokens(
            path: service, query: .init(user: "ann"), body: .json(.TokenUpdateExpiresIn(.init(accessToken: "eyJ.ann")))
        ).ok
        let ann = try await api.getAuthorization(path: .init(service: "api.example.com"), query: .init(user: "ann")).ok
        #expect(try ann.body.json.authorization == "Bearer eyJ.ann")
        #expect(try await api.getTokens(path: .init(service: "api.example.com")).ok.body.json.accessToken == "eyJ.third")

        // Into the client's second group.
        _ = try await api.putTokens(
            path: .init(service: "shared.example.com"), query: .init(accessGroup: "shared"),
            body: .json(.TokenUpdateExpiresIn(.init(accessToken: "eyJ.shared")))
        ).ok
        let sharedItem = try #require(
            try await api.findGenericPassword(query: .init(accessGroup: "shared", service: "shared.example.com"))
                .ok.body.json.one)
        #expect(sharedItem.account == "accessToken")

        // An expired access token is kept, and has no Authorization.
        _ = try await api.putTokens(
            path: .init(service: "old.example.com"),
            body: .json(.TokenUpdateExpiresAt(.init(accessToken: "eyJ.old", expiresAt: "2001-01-01T00:00:00.000Z")))
        ).ok
        #expect(try await api.getTokens(path: .init(service: "old.example.com")).ok.body.json.expired)
        let expired = try await api.getAuthorization(path: .init(service: "old.example.com"))
        expectError(try expired.notFound.body.json.answer, "errSecItemNotFound", -25300)

        #expect(try await api.deleteTokens(path: .init(service: "api.example.com")).ok.body.json.deleted == 2)
        let gone = try await api.getTokens(path: .init(service: "api.example.com"))
        expectError(try gone.notFound.body.json.answer, "errSecItemNotFound", -25300)
        // A `/` in the service is percent-encoded into the path and stays in the name: tokens of
        // the service `a/b`, of which none are stored (not the route of another path).
        let slashed = try await api.getTokens(path: .init(service: "a/b"))
        expectError(try slashed.notFound.body.json.answer, "errSecItemNotFound", -25300)
    }
}
