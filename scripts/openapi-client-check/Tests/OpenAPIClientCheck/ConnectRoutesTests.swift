import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The connect routes a client calls, through the generated client: a start (201), the session
/// (pending, also after a short wait), the 404s, and the callback's 400 page for an unknown state.
/// The provider is put by a plain request; its endpoints are loopback ports nobody listens on.
@Suite struct ConnectRoutesTests {
    @Test func startReadWaitAndRefusals() async throws {
        let server = try LiveServer(settings: ["KEYCHAIND_SERVER_PUBLIC_URL": "http://127.0.0.1:8443"])
        defer { server.stop() }
        let client = try await server.newClient(named: "backend", accessGroups: ["team"])
        let body = Components.Schemas.ConnectStartInput(provider: "calendar", service: "calendar.example", user: "ana")

        let unknown = try await client.startConnect(body: .json(body))
        expectError(try unknown.notFound.body.json.answer, "errSecItemNotFound", -25300)

        try await putProvider(server)
        let started = try await client.startConnect(body: .json(body)).created.body.json
        #expect(started.authorizationURL == "http://127.0.0.1:8443/v1/connect/\(started.connectId)/go")
        let session = try await client.getConnect(path: .init(connectId: started.connectId)).ok.body.json
        #expect(session.state == .pending && session.service == "calendar.example" && session.user == "ana")
        #expect(session.accessGroup == "team" && session.scopes == ["openid"] && session.error == nil)
        let waited = try await client.getConnect(path: .init(connectId: started.connectId), query: .init(wait: 1)).ok.body.json
        #expect(waited.state == .pending)

        let missing = try await client.getConnect(path: .init(connectId: "no-such-session"))
        expectError(try missing.notFound.body.json.answer, "errSecItemNotFound", -25300)
        let forged = try await server.client(token: nil).oauthCallback(query: .init(state: "forged", code: "c"))
        let page = try await String(collecting: forged.badRequest.body.html, upTo: 65_536)
        #expect(page.contains("Not connected"), "\(page)")
    }

    /// `PUT /v1/admin/providers/calendar` as a plain request.
    private func putProvider(_ server: LiveServer) async throws {
        var request = URLRequest(url: server.baseURL.appendingPathComponent("v1/admin/providers/calendar"))
        request.httpMethod = "PUT"
        request.setValue("Bearer \(server.adminToken)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(
            #"{"authorizationEndpoint":"http://127.0.0.1:9/authorize","tokenEndpoint":"http://127.0.0.1:9/token","clientId":"cal","clientSecret":"s3cret","scopes":["openid"],"accessGroups":["team"]}"#
                .utf8)
        let (_, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
    }
}
