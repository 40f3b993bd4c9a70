import Foundation
import KeychaindTesting
import Testing

/// `server.trustedProxies` over loopback: from a trusted peer, `X-Forwarded-For` names the client
/// whose failed-auth budget is spent and whose address the audit line carries; from any other
/// peer the header is ignored.
struct TrustedProxyTests {
    /// The app on a loopback port allowing two failed authentications per address a minute.
    func served(trustedProxies: String?) throws -> InProcessKeychaind {
        var environment = ["KEYCHAIND_LIMITS_AUTH_FAILURES_PER_MINUTE": "2"]
        environment["KEYCHAIND_SERVER_TRUSTED_PROXIES"] = trustedProxies
        return try InProcessKeychaind(environment: environment)
    }

    func forgedFetch(_ server: InProcessKeychaind, from client: String?) throws -> Int {
        let headers = client.map { ["X-Forwarded-For": "6.6.6.6, \($0)"] } ?? [:]
        return try server.client().send("GET", "/v1/admin/clients", headers: headers, token: "kc_forged").status
    }

    /// The audit lines of refused tokens, once `count` are written (by the batcher's thread).
    func refusedLines(_ server: InProcessKeychaind, count: Int) throws -> [String] {
        let auditLog = server.dataDir.appendingPathComponent("audit.log")
        var lines: [String] = []
        let written = waitUntil(timeout: 10) {
            let text = (try? String(contentsOf: auditLog, encoding: .utf8)) ?? ""
            lines = text.split(separator: "\n").map(String.init).filter { $0.contains("\"status\":401") }
            return lines.count >= count
        }
        #expect(written, "\(lines)")
        return lines
    }

    @Test func behindATrustedProxyTheForwardedClientIsLimitedAndAudited() throws {
        let server = try served(trustedProxies: "127.0.0.1/32")
        defer { server.stop() }
        #expect(try (0..<3).map { _ in try forgedFetch(server, from: "198.51.100.7") } == [401, 401, 429])
        // Refused on its head, before its body is read: the head has the forwarded client too.
        let upload = try server.client().send(
            "POST", "/v1/items/genericPassword", headers: ["X-Forwarded-For": "198.51.100.7"],
            body: Data(#"{"service":"s","account":"a","value":"v"}"#.utf8), token: "kc_forged")
        #expect(upload.status == 429)
        // Another client behind the same proxy, and the proxy's own requests, keep their budgets.
        #expect(try forgedFetch(server, from: "198.51.100.8") == 401)
        #expect(try forgedFetch(server, from: nil) == 401)

        let lines = try refusedLines(server, count: 4)
        #expect(lines.filter { $0.contains("\"remote\":\"198.51.100.7\"") }.count == 2, "\(lines)")
        #expect(lines.filter { $0.contains("\"remote\":\"198.51.100.8\"") }.count == 1, "\(lines)")
        #expect(lines.filter { $0.contains("\"remote\":\"127.0.0.1\"") }.count == 1, "\(lines)")
        #expect(!lines.contains { $0.contains("6.6.6.6") })
    }

    @Test func withoutTrustedProxiesTheHeaderIsIgnored() throws {
        let server = try served(trustedProxies: nil)
        defer { server.stop() }
        #expect(try forgedFetch(server, from: "198.51.100.7") == 401)
        #expect(try forgedFetch(server, from: "198.51.100.8") == 401)
        // The budget spent was loopback's, whatever the header says.
        #expect(try forgedFetch(server, from: "198.51.100.9") == 429)
        let lines = try refusedLines(server, count: 2)
        #expect(lines.allSatisfy { $0.contains("\"remote\":\"127.0.0.1\"") }, "\(lines)")
    }
}
