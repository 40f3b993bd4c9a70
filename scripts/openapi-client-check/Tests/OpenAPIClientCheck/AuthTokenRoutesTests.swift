import Foundation
import Testing

/// Token lifetimes through the generated client: a client made with a `ttl`, its token
/// describing itself (natively and as Vault's lookup-self), renewing (by a duration, to the cap,
/// with no body), listed and revoked by accessor, a reissued one revoking itself; a token that
/// never expires does not renew, and an unknown accessor is errSecItemNotFound.
@Suite struct AuthTokenRoutesTests {
    @Test func aTokenWithALifetimeDescribesRenewsAndRevokesItself() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let admin = server.admin

        let created = try await admin.createClient(
            body: .json(.init(name: "ci-runner", accessGroups: ["ci"], ttl: 3600, maxTtl: 7200))
        ).created.body.json
        #expect(created.ttl == 3600 && created.maxTtl == 7200 && created.accessor.hasPrefix("kca_"))
        let expiresAt = try #require(created.expiresAt)
        let cap = try #require(created.maxExpiresAt)
        let listedClient = try #require(try await admin.listClients().ok.body.json.clients.first { $0.name == "ci-runner" })
        #expect(listedClient.ttl == 3600 && listedClient.maxTtl == 7200)

        let runner = server.client(token: created.token)
        let me = try await runner.tokenSelf().ok.body.json
        #expect(me.name == "ci-runner" && me.accessGroups == ["ci"] && me.role == .client && me.subject == nil)
        #expect(me.accessor == created.accessor && me.source == "static" && me.renewable)
        #expect(me.expiresAt == expiresAt && me.maxExpiresAt == cap && (me.ttl ?? 0) > 3500)
        let lookup = try await runner.tokenLookupSelf().ok.body.json
        #expect(lookup.accessor == created.accessor && lookup.data.id == created.token && lookup.data.accessor == created.accessor)
        #expect(lookup.data.creationTtl == 3600 && lookup.data.explicitMaxTtl == 7200 && lookup.data.policies == ["ci"])

        let renewed = try await runner.renewSelf(body: .json(.init(increment: .case2("1h30m")))).ok.body.json
        #expect(try #require(renewed.expiresAt) > expiresAt && renewed.auth.clientToken == created.token)
        let capped = try await runner.renewSelf(body: .json(.init(increment: .case1(86_400)))).ok.body.json
        #expect(capped.expiresAt == cap)
        _ = try await runner.renewSelf().ok
        let everlasting = try await admin.renewSelf(body: .json(.init()))
        expectError(try everlasting.badRequest.body.json, "errSecParam", -50)

        let listed = try await admin.listTokens(query: .init(client: "ci-runner")).ok.body.json.tokens
        #expect(listed.map(\.accessor) == [created.accessor] && listed.first?.expiresAt == cap)
        expectError(try await admin.listTokens().badRequest.body.json, "errSecParam", -50)
        let revoked = try await admin.revokeTokenByAccessor(path: .init(accessor: created.accessor)).ok.body.json
        #expect(revoked.deleted == 1)
        _ = try await runner.tokenSelf().unauthorized
        let unknown = try await admin.revokeTokenByAccessor(path: .init(accessor: created.accessor))
        expectError(try unknown.notFound.body.json.answer, "errSecItemNotFound", -25300)

        let reissued = try await admin.reissueToken(path: .init(name: "ci-runner")).ok.body.json
        #expect(reissued.accessor != created.accessor && reissued.expiresAt != nil && reissued.maxExpiresAt != nil)
        let again = server.client(token: reissued.token)
        _ = try await again.revokeSelf().ok
        _ = try await again.tokenSelf().unauthorized
    }
}
