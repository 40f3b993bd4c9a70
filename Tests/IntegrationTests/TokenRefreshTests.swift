import Foundation
import KeychainClient
import KeychaindTesting
import Testing

/// Server-side refresh (docs/api.md, "Keeping tokens fresh") end to end: the real app on loopback
/// (served in process, `InProcessKeychaind`) calling Authlib's token endpoint (`OAuthServer`), both
/// started and stopped by each test. The binary where the process is what is checked: no secret
/// in what it writes to stderr, and kill -9 during an exchange.
@Suite(.serialized)
final class TokenRefreshTests {
    let provider: OAuthServer
    let server: InProcessKeychaind
    let admin: String

    init() throws {
        provider = try OAuthServer()
        server = try InProcessKeychaind(environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"])
        admin = server.adminToken()
    }

    deinit {
        server.stop()
        provider.stop()
    }

    var http: HTTPTestClient { server.client() }

    /// Stores the seeded tokens for `service`, expiring at `expiresAt`, and a refresh setting for them.
    func register(
        _ service: String, expiresAt: String = OAuthServer.expired, grant: String = "refresh_token",
        clientAuth: String = "basic", refreshBefore: Int = 60, on keychaind: (any LoopbackKeychaind)? = nil
    ) throws -> (accessToken: String, refreshToken: String) {
        try provider.register(
            service, on: keychaind ?? server, expiresAt: expiresAt, grant: grant, clientAuth: clientAuth,
            refreshBefore: refreshBefore)
    }

    func authorization(_ service: String, token: String? = nil) throws -> HTTPTestClient.Response {
        try http.send("GET", "/v1/tokens/\(service)/authorization", token: token ?? admin)
    }

    func refreshState(_ service: String) throws -> [String: Any] {
        let answer = try http.send("GET", "/v1/tokens/\(service)/refresh", token: admin)
        #expect(answer.status == 200, "\(answer.text)")
        return answer.json
    }

    @Test func anExpiredTokenIsRefreshedOnFetchAndTheRotatedRefreshTokenReplacesTheOld() throws {
        let seeded = try register("api.example.com")
        let first = try authorization("api.example.com")
        #expect(first.status == 200, "\(first.text)")
        var stats = try provider.stats()
        #expect(stats.calls == 1)
        #expect(first.json["Authorization"] as? String == "Bearer \(stats.issued[0])")
        #expect(stats.presented == [seeded.refreshToken])

        // The rotated refresh token is stored with the new access token and its expiry.
        let tokens = try http.send("GET", "/v1/tokens/api.example.com", token: admin)
        #expect(tokens.json["accessToken"] as? String == stats.issued[0])
        let rotated = try #require(tokens.json["refreshToken"] as? String)
        #expect(rotated != seeded.refreshToken)
        #expect(tokens.json["expired"] as? Bool == false)
        let state = try refreshState("api.example.com")
        #expect(state["state"] as? String == "ok")
        #expect(state["failures"] as? Int == 0)
        #expect(state["lastRefreshAt"] is String)
        #expect(state["nextRefreshAt"] is String)

        // Not due: no call. Refresh now: the rotated token is presented, never the old one again.
        #expect(try authorization("api.example.com").status == 200)
        #expect(try provider.stats().calls == 1)
        let now = try http.send("POST", "/v1/tokens/api.example.com/refresh", token: admin)
        #expect(now.status == 200, "\(now.text)")
        stats = try provider.stats()
        #expect(stats.presented == [seeded.refreshToken, rotated])
        #expect(try authorization("api.example.com").json["Authorization"] as? String == "Bearer \(stats.issued[1])")
    }

    @Test func theClientLibraryConfiguresRefreshAndItsHeaderIsAlwaysFresh() async throws {
        let keychain = try KeychainClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, token: admin, timeout: 10)
        let seeded = try provider.seed(clientId: OAuthServer.postClient.id)
        try await keychain.saveTokens(
            service: "lib.example.com", accessToken: seeded.accessToken, refreshToken: .replace(seeded.refreshToken),
            expiresAt: Date(timeIntervalSinceNow: -60))
        #expect(try await keychain.refreshState(service: "lib.example.com") == nil)
        let configured = try await keychain.configureRefresh(
            service: "lib.example.com", tokenEndpoint: provider.tokenEndpoint, grant: .refreshToken,
            clientId: OAuthServer.postClient.id, clientSecret: OAuthServer.postClient.secret, clientAuth: .post)
        #expect(configured.state == .ok)
        #expect(configured.clientAuth == .post)
        let header = try await keychain.getAuthorizationHeader(service: "lib.example.com")
        #expect(header == ["Authorization": "Bearer \(try provider.stats().issued.last ?? "")"])
        let state = try #require(try await keychain.refreshState(service: "lib.example.com"))
        #expect(state.state == .ok)
        #expect(state.lastRefreshAt != nil)
        #expect(try await keychain.refreshNow(service: "lib.example.com").failures == 0)
        #expect(try await keychain.removeRefresh(service: "lib.example.com"))
        #expect(try await keychain.removeRefresh(service: "lib.example.com") == false)
        #expect(try await keychain.tokens(service: "lib.example.com")?.accessToken == provider.stats().issued.last)
    }

    @Test func sixtyFourConcurrentFetchesOfAnExpiredTokenMakeOneExchange() throws {
        _ = try register("storm.example.com")
        try provider.control(mode: "slow", delay: 1)
        let answers = ConcurrentAnswers()
        let http = http
        let admin = admin
        DispatchQueue.concurrentPerform(iterations: 64) { _ in
            answers.add(try? http.send("GET", "/v1/tokens/storm.example.com/authorization", token: admin))
        }
        let stats = try provider.stats()
        #expect(stats.calls == 1)
        #expect(stats.issued.count == 1)
        let headers = answers.all.map { $0?.json["Authorization"] as? String }
        #expect(headers.count == 64)
        #expect(headers.allSatisfy { $0 == "Bearer \(stats.issued[0])" }, "\(answers.all.map { $0?.text ?? "nil" })")
    }

    @Test func clientCredentialsTokensRefreshInTheBackgroundBeforeExpiry() throws {
        let background = try InProcessKeychaind(environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "1"])
        defer { background.stop() }
        // Tokens live 63 s and are renewed 60 s ahead: due 3 s after each exchange.
        try provider.control(expiresIn: 63)
        _ = try register("m2m.example.com", grant: "client_credentials", clientAuth: "post", on: background)
        let http = background.client()
        let token = try background.adminToken()
        let first = try http.send("GET", "/v1/tokens/m2m.example.com/authorization", token: token)
        #expect(first.status == 200, "\(first.text)")
        let issuedAfterFirst = try provider.stats().issued.count
        // With no fetch at all, the background refresher renews the token ahead of its expiry,
        // and the next fetch answers the renewed one.
        #expect(waitUntil(timeout: 20) { (try? self.provider.stats().issued.count) ?? 0 > issuedAfterFirst })
        #expect(try provider.stats().authMethods.allSatisfy { $0 == "client_secret_post" })
        var later: HTTPTestClient.Response?
        #expect(waitUntil(timeout: 10) {
            later = try? http.send("GET", "/v1/tokens/m2m.example.com/authorization", token: token)
            let issued = (try? self.provider.stats().issued) ?? []
            return later?.json["Authorization"] as? String == "Bearer \(issued.last ?? "")"
        })
        #expect(later?.json["Authorization"] as? String != first.json["Authorization"] as? String)
        #expect(background.log.contains("token refresh"))
    }

    @Test func invalidGrantPutsTheSettingInNeedsReauthUntilNewTokensAreStored() throws {
        _ = try register("revoked.example.com")
        try provider.control(mode: "invalid_grant")
        let failed = try authorization("revoked.example.com")
        #expect(failed.status == 502)
        #expect(failed.json["error"] as? String == "errSecServiceNotAvailable")
        #expect((failed.json["detail"] as? String)?.contains("invalid_grant") == true, "\(failed.text)")
        var state = try refreshState("revoked.example.com")
        #expect(state["state"] as? String == "needsReauth")
        #expect((state["lastError"] as? String)?.hasPrefix("invalid_grant: the refresh token was revoked") == true)

        // No more calls while it needs new tokens.
        #expect(try authorization("revoked.example.com").status == 502)
        #expect(try provider.stats().calls == 1)

        // New tokens stored by a client: the next due fetch calls the provider again.
        try provider.control(mode: "normal")
        let seeded = try provider.seed(clientId: OAuthServer.basicClient.id)
        let put = try http.json(
            "PUT", "/v1/tokens/revoked.example.com",
            ["accessToken": seeded.accessToken, "refreshToken": seeded.refreshToken, "expiresAt": OAuthServer.expired],
            token: admin)
        #expect(put.status == 200)
        #expect(try refreshState("revoked.example.com")["state"] as? String == "ok")
        #expect(try authorization("revoked.example.com").status == 200)
        state = try refreshState("revoked.example.com")
        #expect(state["state"] as? String == "ok")
        #expect(try provider.stats().calls == 2)
    }

    @Test func aProviderDownIsFailingWhileTheValidStoredTokenIsServedThenRecovers() throws {
        // Valid for 30 s more, but within refreshBefore (60 s): due.
        let valid = RFC3339Text.format(Date().addingTimeInterval(30))
        let seeded = try register("flaky.example.com", expiresAt: valid)
        try provider.control(mode: "error")
        let served = try authorization("flaky.example.com")
        #expect(served.status == 200)
        #expect(served.json["Authorization"] as? String == "Bearer \(seeded.accessToken)")
        var state = try refreshState("flaky.example.com")
        #expect(state["state"] as? String == "failing")
        #expect(state["failures"] as? Int == 1)
        #expect((state["lastError"] as? String)?.contains("HTTP 503") == true)
        // Within the backoff, fetches answer the stored token without calling.
        #expect(try authorization("flaky.example.com").status == 200)
        #expect(try provider.stats().calls == 1)

        try provider.control(mode: "normal")
        let now = try http.send("POST", "/v1/tokens/flaky.example.com/refresh", token: admin)
        #expect(now.status == 200)
        state = now.json
        #expect(state["state"] as? String == "ok")
        #expect(state["failures"] as? Int == 0)
        #expect(state["lastError"] is NSNull)
        let issued = try provider.stats().issued
        #expect(try authorization("flaky.example.com").json["Authorization"] as? String == "Bearer \(issued.last ?? "")")
    }

    @Test func noValidTokenAndTheProviderDownIs502WithTheProvidersError() throws {
        _ = try register("down.example.com")
        try provider.control(mode: "error")
        let failed = try authorization("down.example.com")
        #expect(failed.status == 502)
        #expect((failed.json["detail"] as? String)?.contains("temporarily_unavailable") == true, "\(failed.text)")
        #expect(try refreshState("down.example.com")["state"] as? String == "failing")
    }

    @Test func aClientCannotCreateASettingNorReadARefreshTokenKeptForRefresh() throws {
        let created = try http.json(
            "POST", "/v1/admin/clients", ["name": "backend", "accessGroups": ["admin"]], token: admin)
        let client = try #require(created.json["token"] as? String)
        let seeded = try register("kept.example.com", expiresAt: RFC3339Text.format(Date().addingTimeInterval(3600)))
        let put = try http.json(
            "PUT", "/v1/tokens/kept.example.com/refresh",
            [
                "tokenEndpoint": "http://127.0.0.1:1/token", "grant": "client_credentials", "clientId": "x",
                "clientSecret": "y",
            ], token: client)
        #expect(put.status == 403)
        #expect(try http.send("DELETE", "/v1/tokens/kept.example.com/refresh", token: client).status == 403)

        let asClient = try http.send("GET", "/v1/tokens/kept.example.com", token: client)
        #expect(asClient.status == 200)
        #expect(asClient.json["accessToken"] as? String == seeded.accessToken)
        #expect(asClient.json["refreshToken"] is NSNull)
        let asAdmin = try http.send("GET", "/v1/tokens/kept.example.com", token: admin)
        #expect(asAdmin.json["refreshToken"] as? String == seeded.refreshToken)
        // Nor through the item routes, by name or in a listing of the service; admins still can.
        let refreshItem = "/v1/items/genericPassword?service=kept.example.com&account=refreshToken&return=data"
        #expect(try http.send("GET", refreshItem, token: client).status == 404)
        #expect(try http.send("GET", refreshItem, token: admin).status == 200)
        let listed = try http.send(
            "GET", "/v1/items/genericPassword?service=kept.example.com&limit=all&return=attributes,data", token: client)
        let accounts = (listed.json["items"] as? [[String: Any]])?.compactMap { $0["account"] as? String }
        #expect(accounts == ["accessToken"], "\(listed.text)")
        #expect(!listed.text.contains(seeded.refreshToken))
        // The client may read the state (never the secret).
        let state = try http.send("GET", "/v1/tokens/kept.example.com/refresh", token: client)
        #expect(state.status == 200)
        #expect(!state.text.contains(OAuthServer.basicClient.secret))
        // Nor can a client be given the settings' group.
        let reserved = try http.json(
            "POST", "/v1/admin/clients", ["name": "sneaky", "accessGroups": ["keychaind.refresh"]], token: admin)
        #expect(reserved.status == 400)
        // Plain http to an address other than loopback is refused.
        let outside = try http.json(
            "PUT", "/v1/tokens/kept.example.com/refresh",
            ["tokenEndpoint": "http://10.1.2.3/token", "grant": "client_credentials", "clientId": "x", "clientSecret": "y"],
            token: admin)
        #expect(outside.status == 400)
    }

    @Test func secretsNeverAppearInLogsAuditLinesErrorsOrMetrics() throws {
        // The binary: its log is what is read.
        let server = try KeychaindProcess(environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"])
        defer { server.stop() }
        let http = server.client()
        let admin = try server.adminToken()
        func authorization(_ service: String) throws -> HTTPTestClient.Response {
            try http.send("GET", "/v1/tokens/\(service)/authorization", token: admin)
        }
        let seeded = try register("quiet.example.com", on: server)
        #expect(try authorization("quiet.example.com").status == 200)
        try provider.control(mode: "invalid_grant")
        _ = try http.send("POST", "/v1/tokens/quiet.example.com/refresh", token: admin)
        let failed = try authorization("quiet.example.com")
        let metrics = try http.send("GET", "/v1/metrics", token: admin)
        #expect(metrics.text.contains("keychaind_token_refresh_total{outcome=\"refreshed\"} 1"))
        #expect(metrics.text.contains("keychaind_token_refresh_total{outcome=\"needsReauth\"} 1"))
        #expect(metrics.text.contains("keychaind_token_refresh_settings{state=\"needsReauth\"} 1"))
        #expect(metrics.text.contains("keychaind_token_refresh_duration_seconds_count 2"))
        let state = try http.send("GET", "/v1/tokens/quiet.example.com/refresh", token: admin)
        server.stop()
        let audit = try String(contentsOf: server.dataDir.appendingPathComponent("audit.log"), encoding: .utf8)
        let stats = try provider.stats()
        let secrets = [OAuthServer.basicClient.secret, seeded.refreshToken] + stats.issued + stats.presented
        #expect(failed.status == 200)  // the refreshed token is still valid: answered while needsReauth
        for text in [server.log, audit, metrics.text, state.text] {
            for secret in secrets { #expect(!text.contains(secret)) }
        }
        #expect(audit.contains("/tokens/{service}/refresh"))
        // Each exchange has its audit line: the service tagged, the state it left.
        let exchanges = audit.split(separator: "\n").filter { $0.contains(#""phase":"refresh""#) }
        #expect(exchanges.count == 2, "\(audit)")
        #expect(exchanges.first?.contains(#""client":"keychaind-refresh""#) == true)
        #expect(exchanges.last?.contains(#""refresh":"needsReauth""#) == true)
        #expect(exchanges.allSatisfy { !$0.contains("quiet.example.com") })
    }

    @Test func killedDuringAnExchangeComesBackWithTheOldTokensThenNeedsReauthWithoutALoop() throws {
        // The binary: it is killed.
        let server = try KeychaindProcess(environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"])
        defer { server.stop() }
        let admin = try server.adminToken()
        let seeded = try register("crash.example.com", on: server)
        try provider.control(mode: "slow", delay: 2)
        DispatchQueue.global().async { [http = server.client(), admin] in
            _ = try? http.send("GET", "/v1/tokens/crash.example.com/authorization", token: admin)
        }
        // The provider has the call (and rotates the refresh token when it answers): kill -9.
        #expect(waitUntil(timeout: 5) { (try? self.provider.stats().calls) == 1 })
        server.signal(SIGKILL)
        _ = server.waitForExit()
        // The provider answers (to nobody) and has rotated the refresh token.
        #expect(waitUntil(timeout: 10) { (try? self.provider.stats().issued.count) == 1 })

        let restarted = try KeychaindProcess(
            dataDir: server.dataDir, environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"])
        defer { restarted.stop() }
        let http = restarted.client()
        // The old tokens, as they were: the new ones never reached the store. (Read through the
        // item routes: a token route would refresh first.)
        #expect(try restarted.storedSecret(service: "crash.example.com", account: "accessToken") == seeded.accessToken)
        #expect(try restarted.storedSecret(service: "crash.example.com", account: "refreshToken") == seeded.refreshToken)

        // The provider rotated the refresh token the lost answer carried: the next attempt is
        // refused, and the service needs new tokens; no loop of failing calls.
        try provider.control(mode: "normal")
        let failed = try http.send("GET", "/v1/tokens/crash.example.com/authorization", token: admin)
        #expect(failed.status == 502)
        let state = try http.send("GET", "/v1/tokens/crash.example.com/refresh", token: admin).json
        #expect(state["state"] as? String == "needsReauth")
        #expect((state["lastError"] as? String)?.contains("invalid_grant") == true)
        #expect((state["lastError"] as? String)?.contains("PUT /v1/tokens/{service}") == true)
        let calls = try provider.stats().calls
        for _ in 0..<5 { _ = try http.send("GET", "/v1/tokens/crash.example.com/authorization", token: admin) }
        #expect(try provider.stats().calls == calls)
        #expect(try provider.stats().presented == [seeded.refreshToken, seeded.refreshToken])
        #expect(try restarted.storedSecret(service: "crash.example.com", account: "accessToken") == seeded.accessToken)
    }
}

/// Answers collected from concurrent requests.
final class ConcurrentAnswers: @unchecked Sendable {
    private let lock = NSLock()
    private var answers: [HTTPTestClient.Response?] = []

    func add(_ answer: HTTPTestClient.Response?) { lock.withLock { answers.append(answer) } }
    var all: [HTTPTestClient.Response?] { lock.withLock { answers } }
}

enum RFC3339Text {
    static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
