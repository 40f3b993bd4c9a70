import Foundation
import KeychaindTesting
import Testing

/// A token endpoint that answers what it likes (`OAuthServer.answer`), against the real binary on
/// loopback: no answer stops the server, and no answer puts a secret sent to it into what
/// keychaind stores, logs or answers (issue 40, findings 1, 6 and 7).
@Suite(.serialized)
final class HostileTokenEndpointTests {
    let provider: OAuthServer

    init() throws {
        provider = try OAuthServer()
    }

    deinit { provider.stop() }

    /// A bearer answer whose `expires_in` is `expiresIn`, as JSON has it.
    static func grant(expiresIn: Any) -> [String: Any] {
        ["access_token": "hostile-access", "token_type": "Bearer", "expires_in": expiresIn]
    }

    /// Finding 1: `expires_in` 2^63-1 trapped in a date conversion, and the background refresher
    /// met it again within seconds of every restart (a crash loop). Now it is a failed exchange.
    @Test func anExpiresInBeyondTenYearsIsAFailedExchangeNotACrashBeforeOrAfterARestart() throws {
        try provider.answer(status: 200, body: Self.grant(expiresIn: Int64.max))
        let server = try KeychaindProcess(environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "1"])
        defer { server.stop() }
        _ = try provider.register("huge.example.com", on: server)
        let admin = try server.adminToken()
        let fetch = try server.client().send("GET", "/v1/tokens/huge.example.com/authorization", token: admin)
        #expect(fetch.status == 502, "\(fetch.text)")
        #expect((fetch.json["detail"] as? String)?.contains("expires_in") == true, "\(fetch.text)")
        let state = try server.client().send("GET", "/v1/tokens/huge.example.com/refresh", token: admin).json
        #expect(state["state"] as? String == "failing")
        #expect(
            state["lastError"] as? String
                == "the token endpoint's expires_in is not a whole number of seconds from 1 to 316224000")
        // The background refresher meets the same answer again (backoff 1-2 s), and again after a restart.
        let calls = try provider.stats().calls
        #expect(waitUntil(timeout: 10) { (try? self.provider.stats().calls) ?? 0 > calls })
        #expect(server.process.isRunning)
        #expect(server.stop() == 0, "\(server.log)")
        let restarted = try KeychaindProcess(
            dataDir: server.dataDir, environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "1"])
        defer { restarted.stop() }
        let callsBefore = try provider.stats().calls
        #expect(waitUntil(timeout: 10) { (try? self.provider.stats().calls) ?? 0 > callsBefore })
        #expect(restarted.process.isRunning)
        #expect(try restarted.client().send("GET", "/v1/health").status == 200)
        #expect(restarted.stop() == 0, "\(restarted.log)")
    }

    /// Finding 6: ten thousand years was written with its year cut to four digits (12026 as
    /// 2026): the token read as expired and the provider was called every round for ever. Now the
    /// lifetime is refused and the failing setting backs off (1, 2, 4, 8 s ...).
    @Test func tenThousandYearsIsRefusedAndBacksOffInsteadOfCallingEveryRound() throws {
        try provider.answer(status: 200, body: Self.grant(expiresIn: 315_576_000_000))
        let server = try KeychaindProcess(environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "1"])
        defer { server.stop() }
        _ = try provider.register("aeons.example.com", on: server)
        Thread.sleep(forTimeInterval: 5)
        let calls = try provider.stats().calls
        #expect((1...4).contains(calls), "\(calls) calls in 5 s")
        let admin = try server.adminToken()
        let state = try server.client().send("GET", "/v1/tokens/aeons.example.com/refresh", token: admin).json
        #expect(state["state"] as? String == "failing")
        #expect((state["lastError"] as? String)?.contains("expires_in") == true, "\(state)")
        // Nothing was stored: the seeded access token stands, expired.
        let stored = try server.storedSecret(service: "aeons.example.com", account: "accessToken")
        #expect(stored != "hostile-access")
    }

    /// Every other `expires_in` that is not 1 s to ten years, as a number or a string, is a
    /// failed exchange that stores nothing.
    @Test func everyOtherOddExpiresInIsAFailedExchange() throws {
        let server = try InProcessKeychaind(environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"])
        defer { server.stop() }
        _ = try provider.register("odd.example.com", on: server)
        let admin = server.adminToken()
        let odd: [Any] = ["315576000000", "9223372036854775807", "99999999999999999999", 0, -5, 1e300, "soon", 3600.5]
        for expiresIn in odd {
            try provider.answer(status: 200, body: Self.grant(expiresIn: expiresIn))
            let now = try server.client().send("POST", "/v1/tokens/odd.example.com/refresh", token: admin)
            #expect(now.json["state"] as? String == "failing", "\(expiresIn): \(now.text)")
            #expect((now.json["lastError"] as? String)?.contains("expires_in") == true, "\(expiresIn): \(now.text)")
        }
        #expect(try server.storedSecret(service: "odd.example.com", account: "accessToken") != "hostile-access")
        try provider.answer(status: 200, body: Self.grant(expiresIn: 316_224_000))
        let now = try server.client().send("POST", "/v1/tokens/odd.example.com/refresh", token: admin)
        #expect(now.json["state"] as? String == "ok", "\(now.text)")
        #expect(try server.storedSecret(service: "odd.example.com", account: "accessToken") == "hostile-access")
    }

    /// Finding 7: a provider that repeats what it was sent in its error text put the refresh
    /// token or client secret into `lastError` (which client-role callers read) and the log.
    @Test func errorTextThatRepeatsASecretSentToTheProviderIsLeftOut() throws {
        let server = try KeychaindProcess(environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"])
        defer { server.stop() }
        let admin = try server.adminToken()
        let http = server.client()
        let seeded = try provider.register("echo.example.com", on: server)
        let secret = OAuthServer.basicClient.secret
        let basic = Data("\(OAuthServer.basicClient.id):\(secret)".utf8).base64EncodedString()
        let refreshPiece = String(seeded.refreshToken.dropFirst(5).prefix(10))
        let echoes = [
            "refresh_token=\(seeded.refreshToken) was not accepted",
            "client_secret \(secret) is wrong",
            "Authorization: Basic \(basic)",
            "token ...\(refreshPiece)... unknown",
            "secret \(secret.dropLast(2))",
        ]
        for echo in echoes {
            try provider.answer(status: 400, body: ["error": "invalid_request", "error_description": echo])
            let now = try http.send("POST", "/v1/tokens/echo.example.com/refresh", token: admin)
            #expect(now.status == 200, "\(now.text)")
            let lastError = try #require(now.json["lastError"] as? String)
            #expect(lastError.hasPrefix("invalid_request"), "\(lastError)")
            #expect(lastError.contains("left out"), "\(lastError)")
            let fetch = try http.send("GET", "/v1/tokens/echo.example.com/authorization", token: admin)
            for text in [now.text, fetch.text] {
                #expect(!text.contains(secret.prefix(8)) && !text.contains(refreshPiece.prefix(8)) && !text.contains(basic.prefix(12)))
            }
        }
        // An error code that repeats one is not kept either; a description without one is.
        try provider.answer(status: 400, body: ["error": "bad_\(secret)", "error_description": "x"])
        let code = try http.send("POST", "/v1/tokens/echo.example.com/refresh", token: admin)
        #expect(!code.text.contains(secret.prefix(8)), "\(code.text)")
        try provider.answer(status: 400, body: ["error": "invalid_request", "error_description": "scope \"read\" unknown"])
        let plain = try http.send("POST", "/v1/tokens/echo.example.com/refresh", token: admin)
        #expect(plain.json["lastError"] as? String == #"invalid_request: scope "read" unknown"#)
        server.stop()
        for piece in [secret, String(refreshPiece.prefix(8)), String(basic.prefix(12))] {
            #expect(!server.log.contains(piece))
        }
        #expect(server.log.contains("left out"))
    }
}
