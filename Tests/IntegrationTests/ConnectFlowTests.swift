import Foundation
import KeychainTestSupport
import Testing

/// The connect flow (docs/api.md, "Getting the first token") end to end: the real binary
/// against Authlib's authorization-code grant with PKCE required (`OAuthServer`), the test
/// playing the user's browser (keeping the cookie keychaind sets, following each redirect, giving
/// consent) and the proxy in front of keychaind: `server.publicURL` is an address no one listens
/// on, and the test sends each request for it to the node it chooses.
@Suite(.serialized)
final class ConnectFlowTests {
    static let publicURL = "http://127.0.0.1:8443"
    let provider: OAuthServer

    init() throws {
        provider = try OAuthServer()
    }

    deinit { provider.stop() }

    /// A node with the connect flow configured, the test provider set up (`issuer` when given)
    /// and a client of group `team`.
    struct Node {
        let process: KeychaindProcess
        let admin: String
        var http: HTTPTestClient { process.client() }
    }

    static func environment(sessionSeconds: Int = 600, maxWaits: Int = 16) -> [String: String] {
        [
            "KEYCHAIND_SERVER_PUBLIC_URL": publicURL, "KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0",
            "KEYCHAIND_CONNECT_SESSION_SECONDS": "\(sessionSeconds)", "KEYCHAIND_CONNECT_MAX_WAITS_PER_CLIENT": "\(maxWaits)",
            "KEYCHAIND_CONNECT_RETURN_TO_ORIGINS": "https://app.example,http://127.0.0.1:9000",
        ]
    }

    func start(environment: [String: String] = ConnectFlowTests.environment()) throws -> Node {
        let process = try KeychaindProcess(environment: environment)
        return Node(process: process, admin: try process.adminToken())
    }

    /// `PUT /v1/admin/providers/calendar` for the test provider's `connect-client`.
    func putProvider(on node: Node, issuer: String? = nil, allowedScopes: [String]? = nil) throws {
        var body: [String: Any] = [
            "authorizationEndpoint": provider.authorizationEndpoint, "tokenEndpoint": provider.tokenEndpoint,
            "clientId": OAuthServer.connectClient.id, "clientSecret": OAuthServer.connectClient.secret,
            "scopes": ["openid", "calendar.read"], "authorizationParams": ["access_type": "offline"],
            "accessGroups": ["team"],
        ]
        if let issuer { body["issuer"] = issuer }
        if let allowedScopes { body["allowedScopes"] = allowedScopes }
        let put = try node.http.json("PUT", "/v1/admin/providers/calendar", body, token: node.admin)
        #expect(put.status == 200, "\(put.text)")
    }

    func makeClient(on node: Node, name: String = "app", groups: [String] = ["team"], role: String = "client") throws -> String {
        let created = try node.http.json(
            "POST", "/v1/admin/clients", ["name": name, "accessGroups": groups, "role": role], token: node.admin)
        #expect(created.status == 201, "\(created.text)")
        return try #require(created.json["token"] as? String)
    }

    func startSession(on node: Node, token: String, _ body: [String: Any] = [:]) throws -> HTTPTestClient.Response {
        var request: [String: Any] = ["provider": "calendar", "service": "calendar.example", "user": "ana"]
        // NSNull leaves a key out.
        for (key, value) in body { request[key] = value is NSNull ? nil : value }
        return try node.http.json("POST", "/v1/connect", request, token: token)
    }

    /// What a browser does with a URL on `publicURL`: sends its path and query to `node`, with its
    /// cookie when it has one.
    func browse(_ url: String, on node: Node, cookie: String?) throws -> HTTPTestClient.Response {
        #expect(url.hasPrefix(Self.publicURL + "/"), "\(url)")
        return try node.http.send("GET", String(url.dropFirst(Self.publicURL.count)), headers: cookie.map { ["Cookie": $0] } ?? [:])
    }

    /// The browser's cookie from a `Set-Cookie` (its `name=value`).
    static func cookie(_ response: HTTPTestClient.Response) -> String? {
        response.headers["set-cookie"].map { String($0.prefix { $0 != ";" }) }
    }

    /// Start, first hop (keeping the cookie), consent: the provider's redirect to the callback.
    struct Started {
        let connectId: String
        let cookie: String
        let authorizationRequest: String
        let callback: String
    }

    func runToCallback(on node: Node, token: String, decision: String = "allow", _ body: [String: Any] = [:]) throws -> Started {
        let started = try startSession(on: node, token: token, body)
        #expect(started.status == 201, "\(started.text)")
        let connectId = try #require(started.json["connectId"] as? String)
        let authorizationURL = try #require(started.json["authorizationURL"] as? String)
        #expect(authorizationURL == "\(Self.publicURL)/v1/connect/\(connectId)/go")
        let go = try browse(authorizationURL, on: node, cookie: nil)
        #expect(go.status == 303, "\(go.text)")
        let cookie = try #require(Self.cookie(go))
        let location = try #require(go.headers["location"])
        let consent = try provider.consent(location)
        #expect(consent.status == 200 && consent.json["consent"] as? Bool == true, "\(consent.json)")
        let callback = try provider.decide(location, decision)
        return Started(connectId: connectId, cookie: cookie, authorizationRequest: location, callback: callback)
    }

    static func query(_ url: String) -> [String: String] {
        var items: [String: String] = [:]
        for item in URLComponents(string: url)?.queryItems ?? [] { items[item.name] = item.value ?? "" }
        return items
    }

    func session(_ id: String, on node: Node, token: String, wait: Int? = nil) throws -> HTTPTestClient.Response {
        try Self.session(id, on: node, token: token, wait: wait)
    }

    static func session(_ id: String, on node: Node, token: String, wait: Int? = nil) throws -> HTTPTestClient.Response {
        try node.http.send("GET", "/v1/connect/\(id)" + (wait.map { "?wait=\($0)" } ?? ""), token: token)
    }

    // MARK: - The whole flow

    @Test func theFullFlowStoresTokensThatRefreshAfterwards() throws {
        let node = try start()
        defer { _ = node.process.stop() }
        try putProvider(on: node)
        let app = try makeClient(on: node)
        let run = try runToCallback(on: node, token: app)

        // The first hop's cookie and authorization request, as the contract spells them.
        #expect(run.cookie.hasPrefix("keychaind-connect="))
        let request = Self.query(run.authorizationRequest)
        #expect(request["response_type"] == "code" && request["client_id"] == OAuthServer.connectClient.id)
        #expect(request["redirect_uri"] == "\(Self.publicURL)/v1/oauth/callback")
        #expect(request["code_challenge_method"] == "S256" && request["code_challenge"]?.count == 43)
        #expect(request["scope"] == "openid calendar.read" && request["access_type"] == "offline")
        let state = try #require(request["state"])
        #expect(state.count >= 22 && state != run.connectId)

        // A waiter parked before the callback is answered as soon as it ends.
        let waiting = DispatchSemaphore(value: 0)
        let waited = ConcurrentAnswers()
        Thread {
            waited.add(try? Self.session(run.connectId, on: node, token: app, wait: 20))
            waiting.signal()
        }.start()
        Thread.sleep(forTimeInterval: 0.5)
        let callback = try browse(run.callback, on: node, cookie: run.cookie)
        #expect(callback.status == 200, "\(callback.text)")
        #expect(callback.headers["content-type"] == "text/html; charset=utf-8")
        #expect(callback.headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'")
        #expect(callback.headers["cache-control"] == "no-store")
        #expect(callback.headers["referrer-policy"] == "no-referrer")
        #expect(callback.headers["x-content-type-options"] == "nosniff")
        #expect(!callback.text.contains(state))
        #expect(waiting.wait(timeout: .now() + 10) == .success)
        let answer = try #require(waited.all.first ?? nil)
        #expect(answer.json["state"] as? String == "connected", "\(answer.text)")
        #expect(answer.json["refreshable"] as? Bool == true)
        #expect(answer.json["scope"] as? String == "openid calendar.read")
        #expect(answer.json["service"] as? String == "calendar.example" && answer.json["user"] as? String == "ana")
        #expect(answer.json["accessGroup"] as? String == "team")

        // The tokens are there for the client; the setting names the provider.
        let ops = try makeClient(on: node, name: "ops", role: "admin")
        let stats = try provider.stats()
        let header = try node.http.send("GET", "/v1/tokens/calendar.example/authorization?user=ana", token: app)
        #expect(header.json["Authorization"] as? String == "Bearer \(stats.issued.last ?? "?")", "\(header.text)")
        // The refresh token is kept from the client: only keychaind needs it now.
        let tokens = try node.http.send("GET", "/v1/tokens/calendar.example?user=ana", token: app)
        #expect(tokens.status == 200 && tokens.json["refreshToken"] is NSNull, "\(tokens.text)")
        let refresh = try node.http.send("GET", "/v1/tokens/calendar.example/refresh?user=ana", token: ops)
        #expect(refresh.json["provider"] as? String == "calendar", "\(refresh.text)")
        #expect(refresh.json["state"] as? String == "ok")

        // Refresh works afterwards: the rotated refresh token is used.
        let now = try node.http.send("POST", "/v1/tokens/calendar.example/refresh?user=ana", token: ops)
        #expect(now.status == 200, "\(now.text)")
        let after = try provider.stats()
        #expect(after.presented.count == 1)
        let refreshed = try node.http.send("GET", "/v1/tokens/calendar.example/authorization?user=ana", token: app)
        #expect(refreshed.json["Authorization"] as? String == "Bearer \(after.issued.last ?? "?")")
        #expect(after.issued.last != stats.issued.last)
        // No secret of the flow in what the server wrote.
        let log = node.process.log
        for secret in [state, OAuthServer.connectClient.secret, Self.query(run.callback)["code"] ?? "?", stats.issued.last ?? "?"] {
            #expect(!log.contains(secret))
        }
    }

    // MARK: - What the callback refuses

    @Test func aConnectedAccountFiresOneSignedConnectedWebhook() throws {
        let node = try start()
        defer { _ = node.process.stop() }
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let put = try node.http.json(
            "PUT", "/v1/admin/webhooks/ops", ["url": receiver.url, "events": ["connected"]], token: node.admin)
        #expect(put.status == 200, "\(put.text)")
        try receiver.control(secret: try #require((put.json["webhook"] as? [String: Any])?["secret"] as? String))
        try putProvider(on: node)
        let app = try makeClient(on: node)
        let denied = try runToCallback(on: node, token: app, decision: "deny")
        #expect(try browse(denied.callback, on: node, cookie: denied.cookie).status == 200)
        let run = try runToCallback(on: node, token: app)
        #expect(try browse(run.callback, on: node, cookie: run.cookie).status == 200)

        let deliveries = try receiver.wait(timeout: 20) { !$0.isEmpty }
        #expect(deliveries.count == 1, "a denied session fires nothing; the connected one fires once")
        let delivery = try #require(deliveries.first)
        #expect(delivery.verified, "\(delivery.error ?? "")")
        #expect(delivery.type == "connected" && delivery.body["connectId"] as? String == run.connectId)
        #expect(delivery.body["service"] as? String == "calendar.example" && delivery.body["user"] as? String == "ana")
        #expect(delivery.body["accessGroup"] as? String == "team" && delivery.body["refreshState"] as? String == "ok")
        let stats = try provider.stats()
        let text = String(decoding: try JSONSerialization.data(withJSONObject: delivery.body), as: UTF8.self)
        #expect(!(stats.issued + stats.presented).contains { text.contains($0) }, "no token in a webhook")
    }

    @Test func aStateIsUsedOnceAndAForgedOneStoresNothing() throws {
        let node = try start()
        defer { _ = node.process.stop() }
        try putProvider(on: node)
        let app = try makeClient(on: node)
        let run = try runToCallback(on: node, token: app)
        #expect(try browse(run.callback, on: node, cookie: run.cookie).status == 200)
        let exchanges = try provider.connectStats().exchanges
        let replay = try browse(run.callback, on: node, cookie: run.cookie)
        #expect(replay.status == 400)
        #expect(replay.headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'")
        let forged = try browse(
            "\(Self.publicURL)/v1/oauth/callback?code=abc&state=forged-state-0123456789", on: node, cookie: run.cookie)
        #expect(forged.status == 400)
        #expect(try provider.connectStats().exchanges == exchanges, "no code was exchanged again")
        #expect(try session(run.connectId, on: node, token: app).json["state"] as? String == "connected")
    }

    /// Guessing states (or session ids) spends the address's failed-authentication budget: past
    /// it, 429, as for refused tokens; a valid token from that address is still served.
    @Test func guessedStatesAndSessionsAreBoundedPerAddress() throws {
        var environment = Self.environment()
        environment["KEYCHAIND_LIMITS_AUTH_FAILURES_PER_MINUTE"] = "3"
        let node = try start(environment: environment)
        defer { _ = node.process.stop() }
        var statuses: [Int] = []
        for guess in 0..<3 {
            statuses.append(try browse("\(Self.publicURL)/v1/oauth/callback?code=c&state=guess-\(guess)", on: node, cookie: nil).status)
        }
        #expect(statuses == [400, 400, 400])
        let throttled = try browse("\(Self.publicURL)/v1/connect/guessed-session/go", on: node, cookie: nil)
        #expect(throttled.status == 429, "\(throttled.text)")
        #expect(throttled.headers["retry-after"] != nil)
        #expect(try node.http.send("GET", "/v1/admin/clients", token: node.admin).status == 200)
    }

    @Test func aCallbackWithoutTheCookieFailsTheSessionAndExchangesNothing() throws {
        let node = try start()
        defer { _ = node.process.stop() }
        try putProvider(on: node)
        let app = try makeClient(on: node)
        let run = try runToCallback(on: node, token: app)
        let elsewhere = try browse(run.callback, on: node, cookie: nil)
        #expect(elsewhere.status == 400)
        #expect(elsewhere.text.contains("browser_mismatch"))
        #expect(try provider.connectStats().exchanges == 0)
        let answer = try session(run.connectId, on: node, token: app)
        #expect(answer.json["state"] as? String == "failed" && answer.json["error"] as? String == "browser_mismatch")
        #expect(try node.http.send("GET", "/v1/tokens/calendar.example/authorization?user=ana", token: app).status == 404)
        // Nor can the right browser finish it now.
        #expect(try browse(run.callback, on: node, cookie: run.cookie).status == 400)

        // Another browser's cookie is no better; and it cannot take the first hop of a bound session.
        let second = try runToCallback(on: node, token: app)
        let otherBrowser = "keychaind-connect=" + String(repeating: "A", count: 43)
        #expect(try browse("\(Self.publicURL)/v1/connect/\(second.connectId)/go", on: node, cookie: otherBrowser).status == 400)
        #expect(try browse(second.callback, on: node, cookie: otherBrowser).status == 400)
        #expect(try session(second.connectId, on: node, token: app).json["error"] as? String == "browser_mismatch")
    }

    @Test func anIssuerMismatchFailsTheSessionAndTheRightIssuerPasses() throws {
        let node = try start()
        defer { _ = node.process.stop() }
        try putProvider(on: node, issuer: provider.issuer)
        let app = try makeClient(on: node)
        // No iss at all.
        let missing = try runToCallback(on: node, token: app)
        let refused = try browse(missing.callback, on: node, cookie: missing.cookie)
        #expect(refused.status == 400 && refused.text.contains("issuer_mismatch"))
        #expect(try session(missing.connectId, on: node, token: app).json["error"] as? String == "issuer_mismatch")
        // Another issuer's.
        try provider.redirectIssuer("https://evil.example")
        let wrong = try runToCallback(on: node, token: app)
        #expect(try browse(wrong.callback, on: node, cookie: wrong.cookie).status == 400)
        #expect(try provider.connectStats().exchanges == 0)
        // The provider's own.
        try provider.redirectIssuer(provider.issuer)
        let right = try runToCallback(on: node, token: app)
        #expect(try browse(right.callback, on: node, cookie: right.cookie).status == 200)
        #expect(try session(right.connectId, on: node, token: app).json["state"] as? String == "connected")
    }

    @Test func aDenialFailsTheSessionWithTheProvidersCodeOnly() throws {
        let node = try start()
        defer { _ = node.process.stop() }
        try putProvider(on: node)
        let app = try makeClient(on: node)
        let denied = try runToCallback(on: node, token: app, decision: "deny")
        let page = try browse(denied.callback, on: node, cookie: denied.cookie)
        #expect(page.text.contains("access_denied"))
        #expect(!page.text.contains("resource owner"), "never the error_description")
        #expect(try session(denied.connectId, on: node, token: app).json["error"] as? String == "access_denied")
        // A code RFC 6749 §4.1.2.1 does not name is not repeated.
        let odd = try runToCallback(on: node, token: app, decision: "error:made_up")
        let oddPage = try browse(odd.callback, on: node, cookie: odd.cookie)
        #expect(oddPage.text.contains("provider_error") && !oddPage.text.contains("made_up"))
        #expect(!oddPage.text.contains(Self.query(odd.callback)["state"] ?? "?"))
        #expect(try session(odd.connectId, on: node, token: app).json["error"] as? String == "provider_error")
        #expect(try node.http.send("GET", "/v1/tokens/calendar.example/authorization?user=ana", token: app).status == 404)
    }

    @Test func anExpiredSessionReadsFailedAndItsCallbackStoresNothing() throws {
        let node = try start(environment: Self.environment(sessionSeconds: 10))
        defer { _ = node.process.stop() }
        try putProvider(on: node)
        let app = try makeClient(on: node)
        let run = try runToCallback(on: node, token: app)
        // The session's 10 s pass (the shortest `connect.sessionSeconds`): a wait ends with it.
        var state: String?
        for _ in 0..<4 where state != "failed" {
            state = try session(run.connectId, on: node, token: app, wait: 10).json["state"] as? String
        }
        let expired = try session(run.connectId, on: node, token: app)
        #expect(expired.json["state"] as? String == "failed" && expired.json["error"] as? String == "expired", "\(expired.text)")
        #expect(try browse(run.callback, on: node, cookie: run.cookie).status == 400)
        #expect(try provider.connectStats().exchanges == 0)
    }

    // MARK: - returnTo, visibility, waits

    @Test func returnToMustBeOnAListedOriginAndGetsOnlyTheOutcome() throws {
        let node = try start()
        defer { _ = node.process.stop() }
        try putProvider(on: node)
        let app = try makeClient(on: node)
        for refused in ["https://evil.example/done", "http://app.example/done", "javascript:alert(1)", "/relative"] {
            let answer = try startSession(on: node, token: app, ["returnTo": refused])
            #expect(answer.status == 400 && answer.json["status"] as? Int == -50, "\(refused): \(answer.text)")
        }
        let run = try runToCallback(on: node, token: app, ["returnTo": "https://app.example/done?tab=1"])
        let back = try browse(run.callback, on: node, cookie: run.cookie)
        #expect(back.status == 303)
        #expect(back.headers["location"] == "https://app.example/done?tab=1&connectId=\(run.connectId)&result=connected")
        let denied = try runToCallback(on: node, token: app, decision: "deny", ["returnTo": "http://127.0.0.1:9000/cb"])
        let deniedBack = try browse(denied.callback, on: node, cookie: denied.cookie)
        #expect(deniedBack.headers["location"] == "http://127.0.0.1:9000/cb?connectId=\(denied.connectId)&result=failed&error=access_denied")
    }

    @Test func aSessionIsVisibleToItsGroupOnlyAndStartsFollowTheRules() throws {
        let node = try start()
        defer { _ = node.process.stop() }
        try putProvider(on: node, allowedScopes: ["openid", "calendar.read", "calendar.write"])
        let app = try makeClient(on: node)
        let outsider = try makeClient(on: node, name: "outsider", groups: ["other"])
        let started = try startSession(on: node, token: app)
        let id = try #require(started.json["connectId"] as? String)
        #expect(try session(id, on: node, token: outsider).status == 404)
        #expect(try session(id, on: node, token: app).json["state"] as? String == "pending")
        // A group the caller lacks, a group the provider does not serve, a scope not allowed, no provider.
        #expect(try startSession(on: node, token: app, ["accessGroup": "other"]).status == 403)
        #expect(try startSession(on: node, token: outsider).status == 403)
        #expect(try startSession(on: node, token: app, ["scopes": ["admin"]]).status == 400)
        #expect(try startSession(on: node, token: app, ["scopes": ["calendar.write"]]).status == 201)
        #expect(try startSession(on: node, token: app, ["provider": "nobody"]).status == 404)
        // A service refreshed through another endpoint cannot be taken over.
        let ops = try makeClient(on: node, name: "ops", role: "admin")
        let own = try node.http.json(
            "PUT", "/v1/tokens/mail.example/refresh",
            ["tokenEndpoint": provider.tokenEndpoint, "grant": "client_credentials", "clientId": "basic-client", "clientSecret": "s3cret-basic"],
            token: ops)
        #expect(own.status == 200, "\(own.text)")
        #expect(try startSession(on: node, token: app, ["service": "mail.example", "user": NSNull()]).status == 409)
    }

    @Test func waitsAreCappedPerClient() throws {
        let node = try start(environment: Self.environment(maxWaits: 2))
        defer { _ = node.process.stop() }
        try putProvider(on: node)
        let app = try makeClient(on: node)
        let id = try #require(try startSession(on: node, token: app).json["connectId"] as? String)
        let done = DispatchGroup()
        for _ in 0..<2 {
            done.enter()
            Thread {
                _ = try? Self.session(id, on: node, token: app, wait: 3)
                done.leave()
            }.start()
        }
        Thread.sleep(forTimeInterval: 1)
        let third = try session(id, on: node, token: app, wait: 3)
        #expect(third.status == 429, "\(third.text)")
        #expect(third.headers["retry-after"] == "1")
        // Other requests are served meanwhile, and the waits end at their limit.
        #expect(try session(id, on: node, token: app).json["state"] as? String == "pending")
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(try session(id, on: node, token: app, wait: 1).status == 200)
    }

    @Test func withoutPublicURLTheConnectRoutesNameIt() throws {
        let node = try start(environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"])
        defer { _ = node.process.stop() }
        try putProvider(on: node)
        let app = try makeClient(on: node)
        let answer = try startSession(on: node, token: app)
        #expect(answer.status == 400 && (answer.json["detail"] as? String)?.contains("server.publicURL") == true, "\(answer.text)")
    }

    // MARK: - Two nodes

    @Test func aSessionStartedAndWaitedOnOneNodeEndsOnAnother() throws {
        let cluster = try PGCluster(postgres: try ThrowawayPostgres.shared(), nodes: 2, environment: Self.environment())
        defer { cluster.stopAll() }
        let first = Node(process: cluster.nodes[0], admin: cluster.adminToken)
        let second = Node(process: cluster.nodes[1], admin: cluster.adminToken)
        try putProvider(on: first)
        let app = try makeClient(on: first)
        let run = try runToCallback(on: first, token: app)
        let waiting = DispatchSemaphore(value: 0)
        let waited = ConcurrentAnswers()
        Thread {
            waited.add(try? Self.session(run.connectId, on: first, token: app, wait: 20))
            waiting.signal()
        }.start()
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try browse(run.callback, on: second, cookie: run.cookie).status == 200)
        // Woken by the other node's end, well before its own 20 s.
        #expect(waiting.wait(timeout: .now() + 10) == .success)
        let answer = waited.all.first ?? nil
        #expect(answer?.json["state"] as? String == "connected", "\(answer?.text ?? "no answer")")
        // The state is spent on every node.
        #expect(try browse(run.callback, on: first, cookie: run.cookie).status == 400)
        #expect(try first.http.send("GET", "/v1/tokens/calendar.example/authorization?user=ana", token: app).status == 200)
    }
}
