import Foundation
import KeychainAPI
import KeychainCore
import KeychaindTesting
import KeychainHTTP
import Testing

/// Token lifetimes over the app as keychaind serves it: every token has an accessor and an expiry
/// record; `self`, `lookup-self`, `renew-self` and `revoke-self`; clients made with `ttl`; the
/// admin's list and revocation by accessor; the last admin never locked out.
@Suite struct TokenLifetimeRoutesTests {
    private func integer(_ value: JSONValue?) -> Int64? {
        if case .integer(let number)? = value { return number }
        return nil
    }

    @Test func aStaticTokenDescribesItselfAndNeverExpires() throws {
        let server = try TestServer()
        let me = server.send(.get, "/v1/auth/token/self", token: server.adminToken)
        #expect(me.status == 200)
        #expect(me.json["name"] == .string("admin") && me.json["role"] == .string("admin"))
        #expect(me.json["source"] == .string("static") && me.json["subject"] == .null)
        #expect(me.json["expiresAt"] == .null && me.json["maxExpiresAt"] == .null && me.json["ttl"] == .null)
        #expect(me.json["renewable"] == .bool(false))
        let accessor = try #require(me.json["accessor"]?.stringValue)
        #expect(TokenAccessor.isWellFormed(accessor))
        #expect(me.json["data"] == nil)

        let lookup = server.send(.get, "/v1/auth/token/lookup-self", token: server.adminToken)
        #expect(lookup.status == 200)
        #expect(lookup.json["data"]?["id"] == .string(server.adminToken))
        #expect(lookup.json["data"]?["accessor"] == .string(accessor))
        #expect(integer(lookup.json["data"]?["ttl"]) == 0 && lookup.json["data"]?["expire_time"] == .null)
        #expect(lookup.json["data"]?["policies"] == .array([.string("admin")]))
        #expect(lookup.json["data"]?["type"] == .string("service"))

        let renew = server.send(.post, "/v1/auth/token/renew-self", token: server.adminToken)
        #expect(renew.status == 400 && renew.json["error"] == .string("errSecParam"))
        // The only admin's only token.
        let revoke = server.send(.post, "/v1/auth/token/revoke-self", token: server.adminToken)
        #expect(revoke.status == 400 && revoke.json["error"] == .string("errSecParam"))
        #expect(server.send(.get, "/v1/auth/token/self", token: server.adminToken).status == 200)
        // Vault's renew and revoke take another token in the body: not served.
        #expect(server.send(.post, "/v1/auth/token/renew", token: server.adminToken, body: "{}").status == 404)
        #expect(server.send(.post, "/v1/auth/token/revoke", token: server.adminToken, body: "{}").status == 404)
    }

    @Test func aClientWithATTLGetsTokensThatRenewUpToTheCapAndExpire() throws {
        let server = try TestServer()
        let created = server.send(
            .post, "/v1/admin/clients", token: server.adminToken, body: #"{"name":"svc","accessGroups":["svc"],"ttl":2,"maxTtl":3}"#)
        #expect(created.status == 201)
        let token = try #require(created.json["token"]?.stringValue)
        let accessor = try #require(created.json["accessor"]?.stringValue)
        let expiresAt = try #require(created.json["expiresAt"]?.stringValue.flatMap(RFC3339.parse))
        let cap = try #require(created.json["maxExpiresAt"]?.stringValue.flatMap(RFC3339.parse))
        #expect(abs(cap.timeIntervalSince(expiresAt) - 1) < 0.01)
        #expect(integer(created.json["ttl"]) == 2 && integer(created.json["maxTtl"]) == 3)

        let me = server.send(.get, "/v1/auth/token/self", token: token)
        #expect(me.json["accessor"] == .string(accessor) && me.json["renewable"] == .bool(true))
        #expect((integer(me.json["ttl"]) ?? -1) >= 0 && (integer(me.json["ttl"]) ?? 9) <= 2)
        let listed = server.send(.get, "/v1/admin/tokens?client=svc", token: server.adminToken)
        #expect(listed.status == 200)
        guard case .array(let tokens)? = listed.json["tokens"] else { Issue.record("no tokens"); return }
        #expect(tokens.map { $0["accessor"] } == [.string(accessor)])
        #expect(tokens.first?["source"] == .string("static") && tokens.first?["token"] == nil)

        // A renewal by a duration text; never past the cap.
        let renewed = server.send(.post, "/v1/auth/token/renew-self", token: token, body: #"{"increment":"1m"}"#)
        #expect(renewed.status == 200)
        #expect(renewed.json["expiresAt"]?.stringValue.flatMap(RFC3339.parse) == cap)
        #expect(renewed.json["auth"]?["client_token"] == .string(token))
        #expect(renewed.json["auth"]?["accessor"] == .string(accessor))
        #expect(renewed.json["auth"]?["renewable"] == .bool(true))
        #expect(server.send(.post, "/v1/auth/token/renew-self", token: token, body: #"{"increment":0}"#).status == 400)
        #expect(server.send(.post, "/v1/auth/token/renew-self", token: token, body: #"{"other":1}"#).status == 400)

        try #require(waitUntil(timeout: 6) { Date() > cap.addingTimeInterval(0.05) })
        let expired = server.send(.get, "/v1/items/genericPassword", token: token)
        #expect(expired.status == 401)
        #expect(expired.json["detail"] == .string("token expired"))
        #expect(server.send(.get, "/v1/auth/token/self", token: token).status == 401)
        let none = server.send(.get, "/v1/admin/tokens?client=svc", token: server.adminToken)
        #expect(none.json["tokens"] == .array([]))
        // A reissued token gets the client's lifetime again.
        let reissued = server.send(.post, "/v1/admin/clients/svc/token", token: server.adminToken)
        #expect(reissued.status == 200 && reissued.json["expiresAt"] != .null && reissued.json["accessor"] != .string(accessor))
    }

    /// A renewal answers the lifetime it granted (`auth.lease_duration`, as OpenBao: not a second
    /// short), and is recorded: lookup-self answers `last_renewal` once there was one. The
    /// top-level `renewable` is the token's for a bearer, Vault's (false) for `X-Vault-Token`.
    @Test func aRenewalAnswersTheTTLItGrantedAndIsRecorded() throws {
        let server = try TestServer()
        let created = server.send(
            .post, "/v1/admin/clients", token: server.adminToken,
            body: #"{"name":"svc","accessGroups":["svc"],"ttl":3600,"maxTtl":7200}"#)
        let token = try #require(created.json["token"]?.stringValue)
        let vault = [(name: "X-Vault-Token", value: token)]

        let before = server.send(.get, "/v1/auth/token/lookup-self", token: token)
        #expect(before.json["renewable"] == .bool(true) && before.json["data"]?["renewable"] == .bool(true))
        #expect(before.json["data"]?["last_renewal"] == nil && before.json["data"]?["last_renewal_time"] == nil)
        #expect(integer(before.json["data"]?["creation_ttl"]) == 3600 && integer(before.json["data"]?["explicit_max_ttl"]) == 7200)
        #expect((3599...3600).contains(integer(before.json["data"]?["ttl"]) ?? 0))
        let vaultLookup = server.app.respond(.get, "/v1/auth/token/lookup-self", headers: vault).json
        #expect(vaultLookup["renewable"] == .bool(false) && vaultLookup["data"]?["renewable"] == .bool(true))
        // `self` is keychaind's own answer, whichever header carried the token.
        #expect(server.app.respond(.get, "/v1/auth/token/self", headers: vault).json["renewable"] == .bool(true))

        let renewed = server.send(.post, "/v1/auth/token/renew-self", token: token)
        #expect(renewed.status == 200 && renewed.json["renewable"] == .bool(true))
        #expect(integer(renewed.json["auth"]?["lease_duration"]) == 3600 && renewed.json["auth"]?["renewable"] == .bool(true))
        let longer = server.app.respond(.post, "/v1/auth/token/renew-self", body: #"{"increment":"90m"}"#, headers: vault)
        #expect(longer.status == 200 && longer.json["renewable"] == .bool(false))
        #expect(integer(longer.json["auth"]?["lease_duration"]) == 5400 && longer.json["auth"]?["renewable"] == .bool(true))
        let expiresAt = try #require(longer.json["expiresAt"]?.stringValue.flatMap(RFC3339.parse))

        let after = server.send(.get, "/v1/auth/token/lookup-self", token: token).json["data"]
        let lastRenewal = try #require(after?["last_renewal"]?.stringValue.flatMap(RFC3339.parse))
        #expect(abs(expiresAt.timeIntervalSince(lastRenewal) - 5400) < 0.01)
        #expect(integer(after?["last_renewal_time"]) == Int64(lastRenewal.timeIntervalSince1970.rounded(.down)))
        #expect((5399...5400).contains(integer(after?["ttl"]) ?? 0))
        #expect(integer(after?["creation_ttl"]) == 3600 && integer(after?["explicit_max_ttl"]) == 7200)
    }

    @Test func anAdminRevokesByAccessorAndATokenRevokesItself() throws {
        let server = try TestServer()
        let token = try server.client("app", groups: ["app"])
        let accessor = try #require(server.send(.get, "/v1/auth/token/self", token: token).json["accessor"]?.stringValue)
        #expect(server.send(.delete, "/v1/admin/tokens/\(accessor)", token: token).status == 403)
        let deleted = server.send(.delete, "/v1/admin/tokens/\(accessor)", token: server.adminToken)
        #expect(deleted.status == 200 && integer(deleted.json["deleted"]) == 1)
        let refused = server.send(.get, "/v1/auth/token/self", token: token)
        #expect(refused.status == 401 && refused.json["detail"] == .string("unknown or revoked token"))
        #expect(server.send(.delete, "/v1/admin/tokens/\(accessor)", token: server.adminToken).status == 404)
        #expect(server.send(.delete, "/v1/admin/tokens/kca_nothex", token: server.adminToken).status == 404)
        // The client stays; a new token for it revokes itself.
        let second = try #require(server.send(.post, "/v1/admin/clients/app/token", token: server.adminToken).json["token"]?.stringValue)
        let revoked = server.send(.post, "/v1/auth/token/revoke-self", token: second)
        #expect(revoked.status == 200 && revoked.json == .object([("status", .integer(0))]))
        #expect(server.send(.get, "/v1/auth/token/self", token: second).status == 401)
        #expect(server.send(.get, "/v1/admin/tokens", token: server.adminToken).status == 400)
        #expect(server.send(.get, "/v1/admin/tokens?client=app&role=x", token: server.adminToken).status == 400)
    }

    @Test func theLastAdminIsNeverLockedOut() throws {
        let server = try TestServer()
        // An admin token with a ttl, while an admin without expiry exists: allowed.
        let deputy = server.send(
            .post, "/v1/admin/clients", token: server.adminToken, body: #"{"name":"deputy","accessGroups":["ops"],"role":"admin","ttl":600}"#)
        #expect(deputy.status == 201)
        let deputyToken = try #require(deputy.json["token"]?.stringValue)
        let rootAccessor = try #require(server.send(.get, "/v1/auth/token/self", token: server.adminToken).json["accessor"]?.stringValue)
        // The first admin's token can go: the deputy's is live.
        #expect(server.send(.delete, "/v1/admin/tokens/\(rootAccessor)", token: deputyToken).status == 200)
        // No admin without expiry is left: another admin with a ttl is refused, one without is not.
        let refused = server.send(
            .post, "/v1/admin/clients", token: deputyToken, body: #"{"name":"third","accessGroups":["ops"],"role":"admin","ttl":60}"#)
        #expect(refused.status == 400 && (refused.json["detail"]?.stringValue ?? "").contains("never expires"))
        // The deputy's is now the last live admin token.
        #expect(server.send(.post, "/v1/auth/token/revoke-self", token: deputyToken).status == 400)
        let deputyAccessor = try #require(deputy.json["accessor"]?.stringValue)
        #expect(server.send(.delete, "/v1/admin/tokens/\(deputyAccessor)", token: deputyToken).status == 400)
        #expect(server.send(.delete, "/v1/admin/clients/deputy", token: deputyToken).status == 400)
        #expect(server.send(.get, "/v1/auth/token/self", token: deputyToken).status == 200)
    }

    @Test func clientBodiesAreChecked() throws {
        let server = try TestServer()
        for body in [
            #"{"name":"a","accessGroups":["g"],"maxTtl":60}"#,
            #"{"name":"a","accessGroups":["g"],"ttl":60,"maxTtl":30}"#,
            #"{"name":"a","accessGroups":["g"],"ttl":"1h"}"#,
            #"{"name":"a","accessGroups":["g"],"ttl":0}"#,
            #"{"name":"a","accessGroups":["keychaind.mine"]}"#,
            #"{"name":"a","accessGroups":[]}"#,
        ] {
            let answer = server.send(.post, "/v1/admin/clients", token: server.adminToken, body: body)
            #expect(answer.status == 400 && answer.json["error"] == .string("errSecParam"), "\(body)")
        }
        #expect(server.send(.get, "/v1/admin/clients", token: server.adminToken).json["clients"].map { "\($0)" }?.contains("\"a\"") != true)
    }

    @Test func selfServiceWorksWhileTheVaultIsLocked() throws {
        let server = try TestServer()
        let token = try server.client("app", groups: ["app"])
        #expect(server.send(.post, "/v1/admin/lock", token: server.adminToken).status == 200)
        #expect(server.send(.get, "/v1/items/genericPassword", token: token).status == 503)
        #expect(server.send(.get, "/v1/auth/token/self", token: token).status == 200)
        #expect(server.send(.get, "/v1/auth/token/lookup-self", token: token).status == 200)
        #expect(server.send(.post, "/v1/auth/token/revoke-self", token: token).status == 200)
        #expect(server.send(.post, "/v1/admin/unlock", token: server.adminToken).status == 200)
    }
}
