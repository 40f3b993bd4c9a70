import Foundation
import KeychaindTesting
import KeychainTestSupport
import Testing

/// OAuth providers end to end: the real binary (`KeychaindProcess`) refreshing through a provider
/// set up by its admin against Authlib (`OAuthServer`): the provider's client secret rotated at
/// both ends reaches the next exchange; a public client; a provider still named is not removed;
/// deleting the tokens revokes the refresh token at the provider's RFC 7009 endpoint, after the
/// delete and without failing it.
@Suite(.serialized)
final class ProviderTests {
    let provider: OAuthServer
    let keychaind: KeychaindProcess
    let admin: String

    init() throws {
        provider = try OAuthServer()
        keychaind = try KeychaindProcess(environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"])
        admin = try keychaind.adminToken()
    }

    deinit {
        _ = keychaind.stop()
        provider.stop()
    }

    var http: HTTPTestClient { keychaind.client() }

    /// Stores a token pair seeded for `clientId`, already expired, and a refresh setting for
    /// `service` that names provider `name`; answers the seeded pair.
    func connect(_ service: String, clientId: String, through name: String) throws -> (accessToken: String, refreshToken: String) {
        let seeded = try provider.seed(clientId: clientId)
        let put = try http.json(
            "PUT", "/v1/tokens/\(service)",
            ["accessToken": seeded.accessToken, "refreshToken": seeded.refreshToken, "expiresAt": OAuthServer.expired], token: admin)
        #expect(put.status == 200, "\(put.text)")
        let setting = try http.json("PUT", "/v1/tokens/\(service)/refresh", ["provider": name], token: admin)
        #expect(setting.status == 200, "\(setting.text)")
        #expect(setting.json["provider"] as? String == name && setting.json["tokenEndpoint"] as? String == provider.tokenEndpoint)
        return seeded
    }

    func refreshToken(_ service: String) throws -> String? {
        try http.send("GET", "/v1/tokens/\(service)", token: admin).json["refreshToken"] as? String
    }

    @Test func aSettingRefreshesThroughItsProviderAndAProvidersNewSecretReachesTheNextExchange() throws {
        try provider.setUpProvider("crm", on: keychaind, clientId: "post-client", clientSecret: "s3cret-post", clientAuth: "post")
        let seeded = try connect("crm.example", clientId: "post-client", through: "crm")
        let first = try http.send("GET", "/v1/tokens/crm.example/authorization", token: admin)
        #expect(first.status == 200, "\(first.text)")
        var stats = try provider.stats()
        #expect(stats.calls == 1 && stats.presented == [seeded.refreshToken] && stats.authMethods.last == "client_secret_post")
        #expect(first.json["Authorization"] as? String == "Bearer \(stats.issued[0])")

        // The secret rotated at the provider: keychaind's old one is refused from now on.
        try provider.rotateSecret(of: "post-client", to: "s3cret-post-rotated")
        try provider.setUpProvider(
            "crm", on: keychaind, clientId: "post-client", clientSecret: "s3cret-post-rotated", clientAuth: "post")
        let now = try http.send("POST", "/v1/tokens/crm.example/refresh", token: admin)
        #expect(now.status == 200, "\(now.text)")
        #expect(now.json["state"] as? String == "ok" && now.json["failures"] as? Int == 0, "\(now.text)")
        stats = try provider.stats()
        #expect(stats.calls == 2)
        let fetched = try http.send("GET", "/v1/tokens/crm.example/authorization", token: admin)
        #expect(fetched.json["Authorization"] as? String == "Bearer \(stats.issued[1])")

        // Rotated at the provider only: the next exchange presents the stored (old) secret and is refused.
        try provider.rotateSecret(of: "post-client", to: "s3cret-post-third")
        let refused = try http.send("POST", "/v1/tokens/crm.example/refresh", token: admin)
        #expect(refused.json["state"] as? String == "needsReauth", "\(refused.text)")
        #expect((refused.json["lastError"] as? String)?.hasPrefix("invalid_client") == true, "\(refused.text)")

        // No secret in anything the process wrote: its log, its audit log, its metrics.
        let metrics = try http.send("GET", "/v1/metrics", token: admin).text
        _ = keychaind.stop()
        let audit = try String(contentsOf: keychaind.dataDir.appendingPathComponent("audit.log"), encoding: .utf8)
        #expect(audit.contains("/admin/providers/{name}"))
        stats = try provider.stats()
        for secret in ["s3cret-post", "s3cret-post-rotated", seeded.refreshToken] + stats.issued + stats.presented {
            for text in [keychaind.log, audit, metrics] { #expect(!text.contains(secret)) }
        }
    }

    @Test func aPublicClientSendsItsClientIdAndNoSecret() throws {
        let answer = try provider.setUpProvider("pkce-app", on: keychaind, clientId: OAuthServer.publicClient, clientSecret: nil, clientAuth: "none")
        #expect((answer["provider"] as? [String: Any])?["clientAuth"] as? String == "none")
        let seeded = try connect("public.example", clientId: OAuthServer.publicClient, through: "pkce-app")
        let fetched = try http.send("GET", "/v1/tokens/public.example/authorization", token: admin)
        #expect(fetched.status == 200, "\(fetched.text)")
        let stats = try provider.stats()
        #expect(stats.presented == [seeded.refreshToken] && stats.authMethods.last == "none")
        #expect(fetched.json["Authorization"] as? String == "Bearer \(stats.issued[0])")
    }

    @Test func aProviderNamedByASettingIsNotRemoved() throws {
        try provider.setUpProvider("crm", on: keychaind, clientId: "basic-client", clientSecret: "s3cret-basic", clientAuth: "basic")
        _ = try connect("one.example", clientId: "basic-client", through: "crm")
        let refused = try http.send("DELETE", "/v1/admin/providers/crm", token: admin)
        #expect(refused.status == 400 && refused.json["error"] as? String == "errSecParam")
        #expect((refused.json["detail"] as? String)?.contains("named by 1 refresh setting") == true, "\(refused.text)")
        #expect(try http.send("GET", "/v1/admin/providers/crm", token: admin).status == 200)
        #expect(try http.send("DELETE", "/v1/tokens/one.example/refresh", token: admin).status == 200)
        #expect(try http.send("DELETE", "/v1/admin/providers/crm", token: admin).status == 200)
        #expect(try http.send("GET", "/v1/admin/providers/crm", token: admin).status == 404)
    }

    @Test func deletingTheTokensRevokesTheRefreshTokenAtTheProvider() throws {
        try provider.setUpProvider("crm", on: keychaind, clientId: "basic-client", clientSecret: "s3cret-basic", clientAuth: "basic")
        _ = try connect("crm.example", clientId: "basic-client", through: "crm")
        // One refresh first: the token revoked is the rotated one stored now.
        #expect(try http.send("GET", "/v1/tokens/crm.example/authorization", token: admin).status == 200)
        let stored = try #require(try refreshToken("crm.example"))

        let deleted = try http.send("DELETE", "/v1/tokens/crm.example", token: admin)
        #expect(deleted.status == 200 && deleted.json["deleted"] as? Int == 2, "\(deleted.text)")
        #expect(waitUntil(timeout: 10) { (try? provider.revocations().count) == 1 })
        #expect(try provider.revocations() == [.init(token: stored, hint: "refresh_token", status: 200, revoked: true)])
        // Revoked: the provider refuses it from now on.
        #expect(waitUntil(timeout: 5) { self.metric(#"keychaind_token_revocations_total{outcome="revoked"}"#) == 1 })
        #expect(!keychaind.log.contains(stored))

        // A client-role caller, never shown the kept refresh token, deletes and revokes it too.
        let group = try #require(try http.send("GET", "/v1/tokens/crm.example/refresh", token: admin).json["accessGroup"] as? String)
        let created = try http.json("POST", "/v1/admin/clients", ["name": "backend", "accessGroups": [group]], token: admin)
        let client = try #require(created.json["token"] as? String, "\(created.text)")
        let reseeded = try provider.seed(clientId: "basic-client")
        #expect(try http.json(
            "PUT", "/v1/tokens/crm.example", ["accessToken": reseeded.accessToken, "refreshToken": reseeded.refreshToken],
            token: admin).status == 200)
        #expect(try http.send("GET", "/v1/tokens/crm.example", token: client).json["refreshToken"] is NSNull)
        #expect(try http.send("DELETE", "/v1/tokens/crm.example", token: client).status == 200)
        #expect(waitUntil(timeout: 10) { (try? provider.revocations().count) == 2 })
        #expect(try provider.revocations().last == .init(token: reseeded.refreshToken, hint: "refresh_token", status: 200, revoked: true))

        // Tokens of a provider without a revocation endpoint are deleted and revoked nowhere.
        try provider.setUpProvider(
            "quiet", on: keychaind, clientId: "basic-client", clientSecret: "s3cret-basic", clientAuth: "basic", revocation: false)
        _ = try connect("quiet.example", clientId: "basic-client", through: "quiet")
        #expect(try http.send("DELETE", "/v1/tokens/quiet.example", token: admin).status == 200)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try provider.revocations().count == 2)
    }

    /// A revocation endpoint that does not answer fails nothing: the delete is answered at once
    /// and the outcome counted.
    @Test func aRevocationThatFailsNeitherFailsNorDelaysTheDelete() throws {
        let answer = try http.json(
            "PUT", "/v1/admin/providers/down",
            [
                "authorizationEndpoint": provider.authorizationEndpoint, "tokenEndpoint": provider.tokenEndpoint,
                "clientId": "basic-client", "clientSecret": "s3cret-basic", "accessGroups": ["apps"],
                // Nothing listens on port 9 (discard) on loopback.
                "revocationEndpoint": "http://127.0.0.1:9/revoke",
            ], token: admin)
        #expect(answer.status == 200, "\(answer.text)")
        _ = try connect("down.example", clientId: "basic-client", through: "down")
        let deleted = try http.send("DELETE", "/v1/tokens/down.example", token: admin)
        #expect(deleted.status == 200 && deleted.json["deleted"] as? Int == 2)
        #expect(try refreshToken("down.example") == nil)
        #expect(waitUntil(timeout: 10) { self.metric(#"keychaind_token_revocations_total{outcome="failed"}"#) == 1 })
    }

    /// The value of one metric sample, nil when it is not there.
    func metric(_ sample: String) -> Double? {
        guard let text = try? http.send("GET", "/v1/metrics", token: admin).text else { return nil }
        return text.split(separator: "\n").first { $0.hasPrefix(sample + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }
}

/// Providers on two PostgreSQL nodes: no node keeps a provider, so a client secret rotated
/// through one node is what the other node's next exchange sends.
@Suite(.serialized)
final class ClusterProviderTests {
    @Test func aSecretRotatedOnOneNodeIsUsedByTheOthersNextExchange() throws {
        let provider = try OAuthServer()
        defer { provider.stop() }
        let cluster = try PGCluster(
            postgres: try ThrowawayPostgres.shared(), nodes: 2, environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"])
        defer { cluster.stopAll() }
        let admin = cluster.adminToken
        let (first, second) = (cluster.nodes[0], cluster.client(1))
        try provider.setUpProvider("crm", on: first, clientId: "basic-client", clientSecret: "s3cret-basic", clientAuth: "basic")
        let seeded = try provider.seed(clientId: "basic-client")
        let put = try first.client().json(
            "PUT", "/v1/tokens/crm.example",
            ["accessToken": seeded.accessToken, "refreshToken": seeded.refreshToken, "expiresAt": OAuthServer.expired], token: admin)
        #expect(put.status == 200, "\(put.text)")
        #expect(try first.client().json("PUT", "/v1/tokens/crm.example/refresh", ["provider": "crm"], token: admin).status == 200)

        // The other node exchanges with the provider as stored.
        #expect(try second.send("GET", "/v1/tokens/crm.example/authorization", token: admin).status == 200)
        #expect(try provider.stats().calls == 1)

        try provider.rotateSecret(of: "basic-client", to: "s3cret-basic-rotated")
        try provider.setUpProvider(
            "crm", on: first, clientId: "basic-client", clientSecret: "s3cret-basic-rotated", clientAuth: "basic")
        let now = try second.send("POST", "/v1/tokens/crm.example/refresh", token: admin)
        #expect(now.status == 200 && now.json["state"] as? String == "ok", "\(now.text)")
        #expect(try provider.stats().calls == 2)
        // The provider as the other node reads it: never its secret.
        let read = try second.send("GET", "/v1/admin/providers/crm", token: admin)
        #expect(read.status == 200 && !read.text.contains("s3cret-basic"))
    }
}
