import Foundation
import Testing

/// Server-side refresh when exchanges meet each other: the background refresher's exchanges for
/// several services overlap (bounded by `refresh.concurrency`). The real binary against Authlib's
/// token endpoint (`OAuthServer`), told to answer slowly so that the overlap happens while a
/// call is open.
@Suite(.serialized)
final class TokenRefreshRaceTests {
    let provider: OAuthServer
    let server: KeychaindProcess
    let admin: String

    init() throws {
        provider = try OAuthServer()
        server = try KeychaindProcess(environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"])
        admin = try server.adminToken()
    }

    deinit {
        server.stop()
        provider.stop()
    }

    var http: HTTPTestClient { server.client() }

    @Test func dueServicesAreExchangedInOverlappingTimeAtMostConcurrencyAtOnce() throws {
        let background = try KeychaindProcess(
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
}
