import Foundation
import KeychaindTesting
import Testing

/// Server-side refresh when exchanges meet each other or an admin's change: the background
/// refresher's exchanges for several services overlap (bounded by `refresh.concurrency`), and an
/// exchange whose setting or tokens were replaced or removed while the provider was answering
/// stores nothing. The real app on loopback (in process: `InProcessKeychaind`) against Authlib's
/// token endpoint (`OAuthServer`), told to answer slowly so that the overlap and the change happen
/// while a call is open.
@Suite(.serialized)
final class TokenRefreshRaceTests {
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

    @Test func dueServicesAreExchangedInOverlappingTimeAtMostConcurrencyAtOnce() throws {
        let background = try InProcessKeychaind(
            environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "1", "KEYCHAIND_REFRESH_CONCURRENCY": "2"])
        defer { background.stop() }
        // Four services whose tokens all become due at one moment, a few seconds from now (time
        // to register them); each exchange then takes a second at the provider.
        let dueAt = Date().addingTimeInterval(4)
        let expiresAt = RFC3339Text.format(dueAt.addingTimeInterval(60))
        let services = (1...4).map { "overlap\($0).example.com" }
        for service in services { _ = try provider.register(service, on: background, expiresAt: expiresAt) }
        try provider.control(mode: "slow", delay: 1)

        #expect(waitUntil(timeout: 30) { (try? self.provider.stats().issued.count) == 4 })
        let stats = try provider.stats()
        #expect(stats.calls == 4)  // one exchange per service
        // Two at once (a serial refresher makes one), never more than refresh.concurrency.
        #expect(stats.maxInFlight == 2)
        let http = background.client()
        let token = try background.adminToken()
        for service in services {
            #expect(waitUntil(timeout: 10) {
                let state = (try? http.send("GET", "/v1/tokens/\(service)/refresh", token: token))?.json
                return state?["state"] as? String == "ok" && state?["lastRefreshAt"] is String
            })
        }
    }

    /// Sets the provider answering slowly, sends `method path` (a request that makes an
    /// exchange) as the admin on another thread, and returns once the provider has the call;
    /// the answer arrives in the returned collector.
    func exchangeUnderway(_ method: String, _ path: String) throws -> ConcurrentAnswers {
        try provider.control(mode: "slow", delay: 3)
        let answers = ConcurrentAnswers()
        DispatchQueue.global().async { [http, admin] in answers.add(try? http.send(method, path, token: admin)) }
        #expect(waitUntil(timeout: 10) { (try? self.provider.stats().calls) == 1 })
        return answers
    }

    /// The answer of the exchange's request, once keychaind gave it.
    func answer(of answers: ConcurrentAnswers) throws -> HTTPTestClient.Response? {
        #expect(waitUntil(timeout: 20) { answers.all.count == 1 })
        return answers.all.first ?? nil
    }

    func discardedExchanges() throws -> Double? {
        try http.send("GET", "/v1/metrics", token: admin).sample(#"keychaind_token_refresh_total{outcome="discarded"}"#)
    }

    @Test func aSettingReplacedDuringAnExchangeIsKeptAndTheExchangesTokensAreNotStored() throws {
        let seeded = try register("replaced.example.com")
        let answers = try exchangeUnderway("POST", "/v1/tokens/replaced.example.com/refresh")
        let replaced = try http.json(
            "PUT", "/v1/tokens/replaced.example.com/refresh",
            [
                "tokenEndpoint": provider.tokenEndpoint, "grant": "refresh_token", "clientId": OAuthServer.postClient.id,
                "clientSecret": OAuthServer.postClient.secret, "clientAuth": "post", "refreshBefore": 30,
            ], token: admin)
        #expect(replaced.status == 200)
        #expect(try provider.stats().issued.isEmpty)  // the change came while the provider was answering

        let exchange = try answer(of: answers)
        #expect(try provider.stats().issued.count == 1)
        // The caller is answered the setting as stored now: the admin's, its state afresh.
        #expect(exchange?.status == 200, "\(exchange?.text ?? "no answer")")
        #expect(exchange?.json["clientId"] as? String == OAuthServer.postClient.id)
        let state = try http.send("GET", "/v1/tokens/replaced.example.com/refresh", token: admin).json
        #expect(state["clientId"] as? String == OAuthServer.postClient.id)
        #expect(state["refreshBefore"] as? Int == 30)
        #expect(state["lastRefreshAt"] is NSNull)
        #expect(try server.storedSecret(service: "replaced.example.com", account: "accessToken") == seeded.accessToken)
        #expect(try server.storedSecret(service: "replaced.example.com", account: "refreshToken") == seeded.refreshToken)
        #expect(try discardedExchanges() == 1)
        #expect(server.log.contains("outcome=discarded"), "\(server.log)")
        #expect(!server.log.contains(try provider.stats().issued[0]))
    }

    @Test func aSettingRemovedDuringAnExchangeIsNotBroughtBack() throws {
        let seeded = try register("removed.example.com")
        let answers = try exchangeUnderway("POST", "/v1/tokens/removed.example.com/refresh")
        let removed = try http.send("DELETE", "/v1/tokens/removed.example.com/refresh", token: admin)
        #expect(removed.status == 200)
        #expect(try provider.stats().issued.isEmpty)

        let exchange = try answer(of: answers)
        #expect(try provider.stats().issued.count == 1)
        #expect(exchange?.status == 404, "\(exchange?.text ?? "no answer")")
        #expect(try http.send("GET", "/v1/tokens/removed.example.com/refresh", token: admin).status == 404)
        #expect(try server.storedSecret(service: "removed.example.com", account: "accessToken") == seeded.accessToken)
        #expect(try server.storedSecret(service: "removed.example.com", account: "refreshToken") == seeded.refreshToken)
        #expect(try discardedExchanges() == 1)
    }

    @Test func tokensStoredDuringAnExchangeStandAndTheFetchAnswersThem() throws {
        _ = try register("restored.example.com")
        let answers = try exchangeUnderway("GET", "/v1/tokens/restored.example.com/authorization")
        let fresh = try provider.seed(clientId: OAuthServer.basicClient.id)
        let put = try http.json(
            "PUT", "/v1/tokens/restored.example.com",
            [
                "accessToken": fresh.accessToken, "refreshToken": fresh.refreshToken,
                "expiresAt": RFC3339Text.format(Date().addingTimeInterval(3600)),
            ], token: admin)
        #expect(put.status == 200)
        #expect(try provider.stats().issued.isEmpty)

        let exchange = try answer(of: answers)
        #expect(try provider.stats().issued.count == 1)
        #expect(exchange?.json["Authorization"] as? String == "Bearer \(fresh.accessToken)", "\(exchange?.text ?? "")")
        #expect(try server.storedSecret(service: "restored.example.com", account: "accessToken") == fresh.accessToken)
        #expect(try server.storedSecret(service: "restored.example.com", account: "refreshToken") == fresh.refreshToken)
        let state = try http.send("GET", "/v1/tokens/restored.example.com/refresh", token: admin).json
        #expect(state["state"] as? String == "ok")
        #expect(state["lastRefreshAt"] is NSNull)
        #expect(try discardedExchanges() == 1)
    }

    func register(_ service: String) throws -> (accessToken: String, refreshToken: String) {
        try provider.register(service, on: server)
    }
}
