import Foundation
import Testing

/// Issue 40, finding 8, against the real app on loopback: a plain-http token endpoint that libcurl would
/// look up in DNS (`127.0.0.08`) is refused when the setting is stored.
@Suite(.serialized)
struct LoopbackEndpointTests {
    @Test func aSettingWithANonCanonicalLoopbackAddressIsRefused() throws {
        let server = try InProcessKeychaind(environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"])
        defer { server.stop() }
        let admin = try server.adminToken()
        for endpoint in ["http://127.0.0.08/token", "http://127.0.0.09:8080/token", "http://0127.0.0.1/token"] {
            let put = try server.client().json(
                "PUT", "/v1/tokens/dns.example.com/refresh",
                ["tokenEndpoint": endpoint, "grant": "client_credentials", "clientId": "x", "clientSecret": "y"],
                token: admin)
            #expect(put.status == 400, "\(endpoint): \(put.text)")
        }
        let canonical = try server.client().json(
            "PUT", "/v1/tokens/dns.example.com/refresh",
            ["tokenEndpoint": "http://127.0.0.8/token", "grant": "client_credentials", "clientId": "x", "clientSecret": "y"],
            token: admin)
        #expect(canonical.status == 200, "\(canonical.text)")
    }
}
