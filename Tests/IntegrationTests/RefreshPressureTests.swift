import Foundation
import KeychaindTesting
import KeychainTestSupport
import Testing

/// Refresh under a provider's pressure (docs/api.md, "Keeping tokens fresh"), end to
/// end: the keychaind binary calling Authlib's token endpoint (`OAuthServer`), which answers 429 or
/// 503 with `Retry-After` when told to (`POST /pressure`) and rotates refresh tokens. A hold is
/// seen in the provider's call count (no call while held) and in the settings' `nextRefreshAt`.
@Suite(.serialized)
final class RefreshPressureTests {
    let provider: OAuthServer

    init() throws {
        provider = try OAuthServer()
    }

    deinit { provider.stop() }

    /// A node with no background refresher (each exchange is one a test asks for).
    func keychaind(_ environment: [String: String] = [:]) throws -> KeychaindProcess {
        try KeychaindProcess(environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"].merging(environment) { $1 })
    }

    /// `token`: an admin token of the vault (a second PostgreSQL node writes none of its own).
    func state(_ service: String, on node: any LoopbackKeychaind, token: String? = nil) throws -> [String: Any] {
        let answer = try node.client().send("GET", "/v1/tokens/\(service)/refresh", token: try token ?? node.adminToken())
        #expect(answer.status == 200, "\(answer.text)")
        return answer.json
    }

    func authorization(_ service: String, on node: any LoopbackKeychaind, token: String? = nil) throws -> HTTPTestClient.Response {
        try node.client().send("GET", "/v1/tokens/\(service)/authorization", token: try token ?? node.adminToken())
    }

    static func date(_ value: Any?) -> Date? {
        guard let text = value as? String else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }

    /// An HTTP-date (IMF-fixdate) `seconds` from now.
    static func httpDate(_ seconds: TimeInterval) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date().addingTimeInterval(seconds))
    }

    @Test func retryAfterSecondsHoldsEverySettingOfTheAppForcedRefreshesIncluded() throws {
        let node = try keychaind()
        defer { node.stop() }
        let admin = try node.adminToken()
        _ = try provider.register("crm.example.com", on: node)
        _ = try provider.register("crm-eu.example.com", on: node)
        _ = try provider.register("other-app.example.com", on: node, clientAuth: "post")
        try provider.pressure(status: 429, retryAfter: "30")

        let asked = Date()
        let throttled = try authorization("crm.example.com", on: node)
        #expect(throttled.status == 502, "\(throttled.text)")
        #expect((throttled.json["detail"] as? String)?.contains("HTTP 429 with Retry-After") == true, "\(throttled.text)")
        #expect(try provider.stats().calls == 1)
        let first = try state("crm.example.com", on: node)
        #expect(first["state"] as? String == "failing")
        let holdEnd = try #require(Self.date(first["nextRefreshAt"]), "\(first)")
        #expect(holdEnd >= asked.addingTimeInterval(29) && holdEnd <= Date().addingTimeInterval(31), "\(first)")

        // Another setting of the same client at the same endpoint: not called, held to the same end.
        let held = try authorization("crm-eu.example.com", on: node)
        #expect(held.status == 502, "\(held.text)")
        #expect(try provider.stats().calls == 1)
        let second = try state("crm-eu.example.com", on: node)
        #expect(second["state"] as? String == "failing")
        #expect(Self.date(second["nextRefreshAt"]) == holdEnd, "\(second)")
        #expect((second["lastError"] as? String)?.contains("Retry-After") == true, "\(second)")

        // An admin's refresh now is held too: answered with the state, no call.
        for service in ["crm.example.com", "crm-eu.example.com"] {
            let forced = try node.client().send("POST", "/v1/tokens/\(service)/refresh", token: admin)
            #expect(forced.status == 200, "\(forced.text)")
            #expect(Self.date(forced.json["nextRefreshAt"]) == holdEnd, "\(forced.text)")
        }
        #expect(try provider.stats().calls == 1)

        // Another client id at that endpoint is not held (and the provider answers normally again).
        let other = try authorization("other-app.example.com", on: node)
        #expect(other.status == 200, "\(other.text)")
        #expect(try provider.stats().calls == 2)
    }

    @Test func anHTTPDateOn503IsCappedAtMaxRetryAfterSecondsAndCallsResumeAfterIt() throws {
        let node = try keychaind(["KEYCHAIND_REFRESH_MAX_RETRY_AFTER_SECONDS": "3"])
        defer { node.stop() }
        _ = try provider.register("capped.example.com", on: node)
        _ = try provider.register("capped-too.example.com", on: node)
        try provider.pressure(status: 503, retryAfter: Self.httpDate(3600))

        let asked = Date()
        #expect(try authorization("capped.example.com", on: node).status == 502)
        let answered = Date()
        let holdEnd = try #require(Self.date(try state("capped.example.com", on: node)["nextRefreshAt"]))
        #expect(holdEnd >= asked.addingTimeInterval(3) && holdEnd <= answered.addingTimeInterval(3.01), "held to \(holdEnd)")
        #expect(try authorization("capped-too.example.com", on: node).status == 502)
        #expect(try provider.stats().calls == 1)

        // Once the (capped) hold has ended, the next fetch calls the provider and gets tokens.
        Thread.sleep(until: holdEnd.addingTimeInterval(0.2))
        let resumed = try authorization("capped-too.example.com", on: node)
        #expect(resumed.status == 200, "\(resumed.text)")
        #expect(try provider.stats().calls == 2)
        #expect(try state("capped-too.example.com", on: node)["state"] as? String == "ok")
    }

    /// The database is untrusted: a hold written into it that ends in a thousand years holds no
    /// longer than `refresh.maxRetryAfterSeconds` from the moment it is read.
    @Test func aHoldAlteredInTheDatabaseIsCappedWhenRead() throws {
        let node = try keychaind(["KEYCHAIND_REFRESH_MAX_RETRY_AFTER_SECONDS": "5"])
        defer { node.stop() }
        _ = try provider.register("altered.example.com", on: node)
        let farFuture = Int64(Date().timeIntervalSince1970 * 1000) + 1000 * 365 * 86_400 * 1000
        let written = try Command.run([
            "sqlite3", node.dataDir.appendingPathComponent("keychain.db").path,
            "INSERT INTO provider_holds VALUES ('\(provider.tokenEndpoint)', '\(OAuthServer.basicClient.id)', \(farFuture))",
        ])
        #expect(written.status == 0, "\(written.stderr)")
        let asked = Date()
        #expect(try authorization("altered.example.com", on: node).status == 502)
        #expect(try provider.stats().calls == 0)
        let holdEnd = try #require(Self.date(try state("altered.example.com", on: node)["nextRefreshAt"]))
        #expect(holdEnd >= asked.addingTimeInterval(4) && holdEnd <= Date().addingTimeInterval(5), "held to \(holdEnd)")
    }

    @Test func anUnparsableOrPastRetryAfterIsIgnored() throws {
        let node = try keychaind()
        defer { node.stop() }
        _ = try provider.register("soon.example.com", on: node)
        _ = try provider.register("soon-too.example.com", on: node)
        try provider.pressure(status: 429, retryAfter: "soon")
        #expect(try authorization("soon.example.com", on: node).status == 502)
        let failing = try state("soon.example.com", on: node)
        #expect(failing["state"] as? String == "failing")
        // The usual backoff (at most a second after one failure), not a hold.
        #expect(try #require(Self.date(failing["nextRefreshAt"])) <= Date().addingTimeInterval(1.01), "\(failing)")
        try provider.pressure(status: 503, retryAfter: Self.httpDate(-60))
        #expect(try authorization("soon-too.example.com", on: node).status == 502)
        #expect(try provider.stats().calls == 2, "neither answer held the app")
        // Past its backoff the setting calls again, and gets tokens.
        let backoff = try #require(Self.date(try state("soon-too.example.com", on: node)["nextRefreshAt"]))
        #expect(backoff <= Date().addingTimeInterval(1.01))
        Thread.sleep(until: backoff.addingTimeInterval(0.1))
        #expect(try authorization("soon-too.example.com", on: node).status == 200)
        #expect(try provider.stats().calls == 3)
    }

    @Test func twoPostgreSQLNodesShareTheHold() throws {
        let cluster = try PGCluster(
            postgres: try ThrowawayPostgres.shared(), nodes: 2, environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"])
        defer { cluster.stopAll() }
        _ = try provider.register("shared-crm.example.com", on: cluster.nodes[0])
        _ = try provider.register("shared-crm-eu.example.com", on: cluster.nodes[0])
        try provider.pressure(status: 429, retryAfter: "30")

        #expect(try authorization("shared-crm.example.com", on: cluster.nodes[0]).status == 502)
        #expect(try provider.stats().calls == 1)
        let holdEnd = try #require(Self.date(try state("shared-crm.example.com", on: cluster.nodes[0])["nextRefreshAt"]))

        // The other node holds both settings of the app: no call, fetched or forced.
        #expect(try authorization("shared-crm-eu.example.com", on: cluster.nodes[1], token: cluster.adminToken).status == 502)
        let forced = try cluster.client(1).send("POST", "/v1/tokens/shared-crm.example.com/refresh", token: cluster.adminToken)
        #expect(forced.status == 200, "\(forced.text)")
        #expect(Self.date(forced.json["nextRefreshAt"]) == holdEnd, "\(forced.text)")
        #expect(Self.date(try state("shared-crm-eu.example.com", on: cluster.nodes[1], token: cluster.adminToken)["nextRefreshAt"]) == holdEnd)
        #expect(try provider.stats().calls == 1)
    }

    // MARK: - invalid_grant after another party's rotation

    /// Starts a fetch of `service`'s expired token whose exchange (presenting `refreshToken`) the
    /// provider answers only after `delay` seconds; returns once that call is in flight.
    func fetchInFlight(_ service: String, on node: KeychaindProcess, answers: ConcurrentAnswers) throws -> WorkerThread {
        try provider.control(mode: "slow", delay: 2)
        let client = node.client()
        let admin = try node.adminToken()
        let worker = WorkerThread(name: "fetch") {
            answers.add(try? client.send("GET", "/v1/tokens/\(service)/authorization", token: admin))
        }
        #expect(waitUntil(timeout: 10) { (try? self.provider.inFlight()) == 1 })
        // Only that call is slow: the provider answers the others at once.
        try provider.control(mode: "normal")
        return worker
    }

    @Test func aRotationStoredWhileTheOldTokenWasInFlightServesTheNewerAccessToken() throws {
        let node = try keychaind()
        defer { node.stop() }
        let seeded = try provider.register("rotated.example.com", on: node)
        let answers = ConcurrentAnswers()
        let worker = try fetchInFlight("rotated.example.com", on: node, answers: answers)
        defer { worker.join() }

        // Meanwhile another party rotates the refresh token and stores what it got.
        let newer = try provider.rotate(seeded.refreshToken)
        let put = try node.client().json(
            "PUT", "/v1/tokens/rotated.example.com",
            ["accessToken": newer.accessToken, "refreshToken": newer.refreshToken, "expiresAt": RFC3339Text.format(Date().addingTimeInterval(3600))],
            token: try node.adminToken())
        #expect(put.status == 200, "\(put.text)")
        worker.join()

        // The provider refused the old token; the newer access token, still valid, is served.
        let fetched = try #require(answers.all.first ?? nil)
        #expect(fetched.status == 200, "\(fetched.text)")
        #expect(fetched.json["Authorization"] as? String == "Bearer \(newer.accessToken)")
        let stats = try provider.stats()
        #expect(stats.presented == [seeded.refreshToken, seeded.refreshToken], "the other party's call, then keychaind's refused one")
        #expect(stats.calls == 2)
        #expect(try state("rotated.example.com", on: node)["state"] as? String == "ok")
    }

    @Test func aRotationStoredWithoutAValidAccessTokenIsExchangedOnceMore() throws {
        let node = try keychaind()
        defer { node.stop() }
        let seeded = try provider.register("rotated-expired.example.com", on: node)
        let answers = ConcurrentAnswers()
        let worker = try fetchInFlight("rotated-expired.example.com", on: node, answers: answers)
        defer { worker.join() }

        // The other party stores only the newer refresh token (its access token already expired).
        let newer = try provider.rotate(seeded.refreshToken)
        let put = try node.client().json(
            "PUT", "/v1/tokens/rotated-expired.example.com",
            ["accessToken": newer.accessToken, "refreshToken": newer.refreshToken, "expiresAt": OAuthServer.expired],
            token: try node.adminToken())
        #expect(put.status == 200, "\(put.text)")
        worker.join()

        let fetched = try #require(answers.all.first ?? nil)
        #expect(fetched.status == 200, "\(fetched.text)")
        let stats = try provider.stats()
        #expect(stats.presented == [seeded.refreshToken, seeded.refreshToken, newer.refreshToken])
        #expect(fetched.json["Authorization"] as? String == "Bearer \(stats.issued.last ?? "")")
        let state = try state("rotated-expired.example.com", on: node)
        #expect(state["state"] as? String == "ok", "\(state)")
        #expect(state["failures"] as? Int == 0)
    }

    /// The newer tokens were stored through another PostgreSQL node: the node whose call was
    /// refused reads them from the database, not from what it had read before.
    @Test func aRotationStoredThroughAnotherPostgreSQLNodeIsFollowed() throws {
        let cluster = try PGCluster(
            postgres: try ThrowawayPostgres.shared(), nodes: 2, environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"])
        defer { cluster.stopAll() }
        let seeded = try provider.register("rotated-pg.example.com", on: cluster.nodes[0])
        let answers = ConcurrentAnswers()
        let worker = try fetchInFlight("rotated-pg.example.com", on: cluster.nodes[0], answers: answers)
        defer { worker.join() }
        let newer = try provider.rotate(seeded.refreshToken)
        let put = try cluster.client(1).json(
            "PUT", "/v1/tokens/rotated-pg.example.com",
            ["accessToken": newer.accessToken, "refreshToken": newer.refreshToken, "expiresAt": OAuthServer.expired],
            token: cluster.adminToken)
        #expect(put.status == 200, "\(put.text)")
        worker.join()

        let fetched = try #require(answers.all.first ?? nil)
        #expect(fetched.status == 200, "\(fetched.text)")
        let stats = try provider.stats()
        #expect(stats.presented == [seeded.refreshToken, seeded.refreshToken, newer.refreshToken])
        #expect(fetched.json["Authorization"] as? String == "Bearer \(stats.issued.last ?? "")")
        for node in 0..<2 {
            let state = try state("rotated-pg.example.com", on: cluster.nodes[node], token: cluster.adminToken)
            #expect(state["state"] as? String == "ok", "\(state)")
        }
    }

    @Test func aRefusalOfTheStoredRefreshTokenStillNeedsReauth() throws {
        let node = try keychaind()
        defer { node.stop() }
        let seeded = try provider.register("lost.example.com", on: node)
        // Rotated elsewhere and never stored here: the stored refresh token is the refused one.
        _ = try provider.rotate(seeded.refreshToken)
        let failed = try authorization("lost.example.com", on: node)
        #expect(failed.status == 502, "\(failed.text)")
        #expect((failed.json["detail"] as? String)?.contains("invalid_grant") == true, "\(failed.text)")
        #expect(try state("lost.example.com", on: node)["state"] as? String == "needsReauth")
        #expect(try provider.stats().presented == [seeded.refreshToken, seeded.refreshToken])
    }
}
