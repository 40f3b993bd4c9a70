import Foundation
import KeychaindTesting
import Testing

/// What requests without a token may write to the audit log: health probes nothing, unknown
/// routes their address's budget (`audit.unauthenticatedLinesPerMinute`), the rest counted; a
/// caller with a valid token every line. 3,000 pipelined health probes or unknown paths from one
/// connection used to add ~450 KB in a twentieth of a second.
@Suite(.serialized)
final class UnauthenticatedAuditTests {
    let server: InProcessKeychaind
    let admin: String
    let requests = 3000

    init() throws {
        server = try InProcessKeychaind()
        admin = server.adminToken()
    }

    deinit { server.stop() }

    var auditLog: URL { server.dataDir.appendingPathComponent("audit.log") }

    func auditLines() throws -> [String] {
        try String(contentsOf: auditLog, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    /// Sends `count` requests for `path` pipelined on one connection, in batches (so that neither
    /// side's socket buffer fills while the other waits), and reads every answer.
    func pipelined(_ count: Int, _ path: String, token: String? = nil) throws -> [Int] {
        let connection = try TestConnection(port: server.port)
        let headers = token.map { ["Authorization": "Bearer \($0)"] } ?? [:]
        let request = HTTPTestClient.head("GET", path, headers: headers, bodyLength: nil)
        var statuses: [Int] = []
        for start in stride(from: 0, to: count, by: 100) {
            let batch = min(100, count - start)
            try connection.write(Array(repeating: request, count: batch).reduce(Data(), +))
            for _ in 0..<batch { statuses.append(try connection.readResponse().status) }
        }
        return statuses
    }

    /// The log once the lines of `count` token fetches by the admin are in it, after one more such
    /// fetch (the marker): lines are written in order, so every line before it is in too.
    func flushed(afterAdminFetches count: Int) throws -> [String] {
        let answer = try server.client().send("GET", "/v1/tokens/marker.example.com", token: admin)
        #expect(answer.status == 404)
        let adminFetch = { (line: String) in line.contains("\"client\":\"admin\"") && line.contains("/tokens/{service}") }
        #expect(waitUntil(timeout: 10) { ((try? self.auditLines()) ?? []).filter(adminFetch).count == count + 1 })
        return try auditLines()
    }

    func skippedLines() throws -> Double? {
        try server.client().send("GET", "/v1/metrics", token: admin).sample("keychaind_audit_unauthenticated_skipped_total")
    }

    @Test func healthProbesWriteNothingAndUnknownRoutesOnlyTheirBudget() throws {
        let before = try auditLines().count
        let sizeBefore = try FileManager.default.attributesOfItem(atPath: auditLog.path)[.size] as? Int ?? 0

        let health = try pipelined(requests, "/v1/health")
        #expect(health.allSatisfy { $0 == 200 })
        let unknown = try pipelined(requests, "/v1/no-such-route")
        #expect(unknown.allSatisfy { $0 == 404 })

        let lines = try flushed(afterAdminFetches: 0)
        let written = lines.dropFirst(before)
        let size = try FileManager.default.attributesOfItem(atPath: auditLog.path)[.size] as? Int ?? 0
        Hardening.report("audit log +\(size - sizeBefore) bytes for \(2 * requests) unauthenticated requests")
        #expect(!written.contains { $0.contains("\"route\":\"/health\"") })
        let unmatched = written.filter { $0.contains("\"route\":\"unmatched\"") }.count
        // The default budget, 60 a minute, plus what refilled while the test ran.
        #expect(unmatched >= 60 && unmatched <= 70, "\(unmatched) lines for unknown routes")
        #expect(size - sizeBefore < 20_000, "the audit log grew by \(size - sizeBefore) bytes")
        #expect(try skippedLines() == Double(requests - unmatched))
    }

    @Test func callersWithAValidTokenAreAuditedWithoutABudget() throws {
        let before = try auditLines().count
        let fetched = try pipelined(500, "/v1/tokens/absent.example.com", token: admin)
        #expect(fetched.allSatisfy { $0 == 404 })
        let lines = try flushed(afterAdminFetches: 500).dropFirst(before)
        // The 500 and the marker.
        #expect(lines.filter { $0.contains("\"client\":\"admin\"") && $0.contains("/tokens/{service}") }.count == 501)
        #expect(try skippedLines() == 0)
    }
}
