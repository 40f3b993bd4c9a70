import Foundation
import Testing

/// `POST /v1/tokens/{service}/refresh` by role (issue 40): a client-role caller gets the record as
/// it is, without a call, while the setting needs new tokens or backs off after failures, so no
/// client can hammer the provider and get the app rate-limited or banned; an admin forces a call.
/// The app in process on a loopback port (`InProcessKeychaind`): no binary spawned.
@Suite(.serialized)
final class RefreshNowByRoleTests {
    let provider: OAuthServer
    let server: InProcessKeychaind
    let admin: String
    let client: String

    init() throws {
        provider = try OAuthServer()
        server = try InProcessKeychaind(environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"])
        admin = server.adminToken()
        let created = try server.client().json(
            "POST", "/v1/admin/clients", ["name": "backend", "accessGroups": ["admin"]], token: admin)
        client = try #require(created.json["token"] as? String)
    }

    deinit {
        server.stop()
        provider.stop()
    }

    func refreshNow(_ service: String, token: String) throws -> [String: Any] {
        let answer = try server.client().send("POST", "/v1/tokens/\(service)/refresh", token: token)
        #expect(answer.status == 200, "\(answer.text)")
        return answer.json
    }

    @Test func aClientsRefreshNowCallsNoProviderWithinTheBackoffNorInNeedsReauth() throws {
        _ = try provider.register("busy.example.com", on: server)
        try provider.control(mode: "error")
        // Four failures in a row: the backoff is now 4-8 s.
        for _ in 0..<4 { _ = try refreshNow("busy.example.com", token: admin) }
        var calls = try provider.stats().calls
        #expect(calls == 4)
        for _ in 0..<10 {
            let state = try refreshNow("busy.example.com", token: client)
            #expect(state["state"] as? String == "failing")
            #expect(state["failures"] as? Int == 4)
        }
        #expect(try provider.stats().calls == calls)

        try provider.control(mode: "invalid_grant")
        #expect(try refreshNow("busy.example.com", token: admin)["state"] as? String == "needsReauth")
        calls = try provider.stats().calls
        for _ in 0..<10 {
            #expect(try refreshNow("busy.example.com", token: client)["state"] as? String == "needsReauth")
        }
        #expect(try provider.stats().calls == calls)
        // An admin still forces a call.
        _ = try refreshNow("busy.example.com", token: admin)
        #expect(try provider.stats().calls == calls + 1)
    }

    @Test func aClientsRefreshNowOfASettingThatIsOkStillCalls() throws {
        _ = try provider.register("fine.example.com", on: server)
        #expect(try refreshNow("fine.example.com", token: client)["state"] as? String == "ok")
        #expect(try provider.stats().calls == 1)
    }
}
