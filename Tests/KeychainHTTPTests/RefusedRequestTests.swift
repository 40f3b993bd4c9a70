import Foundation
import KeychainAPI
import KeychainCore
import KeychainObservability
import KeychainTestSupport
import Logging
import Synchronization
import Testing

@testable import KeychainHTTP

/// Issue 29, items 4 and 7: a refused caller costs no body parsing and no HMAC, is refused on
/// its request's head, and gets a short audit line; a failed authentication the limit answers
/// 429 is counted, not audited.
struct RefusedRequestTests {
    final class Count: Sendable {
        let value = Mutex(0)
        var now: Int { value.withLock { $0 } }
    }

    /// An application with the client routes, an auditor writing every line before it answers
    /// (to `path`), a MAC that counts its calls, and optionally a failed-auth limit.
    static func application(
        auditPath: String, macs: Count, limiter: AuthFailureLimiter? = nil
    ) throws -> (KeychainApplication, adminToken: String) {
        let clients = InMemoryClientStore()
        let tokens = TestTokenIssuer()
        var router = Router()
        router.addClientRoutes(clients: clients, tokens: tokens)
        let auditor = Auditor(
            sink: AuditLog(file: AuditFile(path: auditPath), failClosed: true, logger: ObserveTests.noLog)
        ) { message, mac in
            macs.value.withLock { $0 += 1 }
            return SHA256Stub.mac(message, mac)
        }
        let application = KeychainApplication(
            router: router, authenticator: Authenticator(clients: clients, tokens: tokens), logger: ObserveTests.noLog,
            auditor: auditor, authFailureLimiter: limiter)
        let (token, hash) = tokens.newToken()
        try clients.addClient(Client(name: "root", accessGroups: ["root"], role: .admin, createdAt: Date()), tokenHash: hash)
        return (application, token)
    }

    static func lines(_ path: String) throws -> [[String: Any]] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    static func post(_ token: String?, body: String, from address: String = "10.1.1.1") -> HTTPRequest {
        HTTPRequest(
            method: .post, path: "/v1/admin/clients",
            headers: token.map { [("Authorization", $0)] } ?? [], body: Array(body.utf8), remoteAddress: address)
    }

    /// 150 bad-token POSTs, whose bodies name a client (an HMAC tag, were they parsed): 150 short
    /// lines (address, route, status, reason) with no target, no HMAC computed, nothing parsed.
    @Test func failedAuthenticationsWriteShortLinesAndParseNothing() throws {
        let path = ObserveTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let macs = Count()
        let (application, _) = try Self.application(auditPath: path, macs: macs)
        // Not even JSON: parsed, it would be errSecParam (400), not 401.
        let body = #"{"name":"intruder","accessGroups":["#
        let headers = ["Bearer kc_forged-token", "Basic cm9vdDpyb290", nil]
        for index in 0..<150 {
            let answer = application.respond(to: Self.post(headers[index % 3], body: body))
            #expect(answer.status == 401)
        }
        #expect(macs.now == 0, "no tag computed for a refused caller")
        let lines = try Self.lines(path)
        #expect(lines.count == 150)
        for line in lines {
            #expect(Set(line.keys) == ["time", "id", "client", "remote", "method", "route", "status", "osStatus", "reason", "ms"])
            #expect(line["remote"] as? String == "10.1.1.1" && line["route"] as? String == "/admin/clients")
        }
        #expect(lines.map { $0["reason"] as? String } == (0..<150).map { ["unknown", "malformed", "missing"][$0 % 3] })
    }

    /// Failed authentications past the budget are answered 429, counted by the limiter
    /// (`keychaind_auth_throttled_total`) and not written to the audit log.
    @Test func throttledFailuresAreCountedNotAudited() throws {
        let path = ObserveTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let clock = ManualClock()
        let limiter = AuthFailureLimiter(failuresPerMinute: 3, maxAddresses: 10, now: { clock.now })
        let (application, admin) = try Self.application(auditPath: path, macs: Count(), limiter: limiter)
        let throttled = 40
        let statuses = (0..<(3 + throttled)).map { _ in
            application.respond(to: Self.post("Bearer kc_forged-token", body: "{}")).status
        }
        #expect(statuses == Array(repeating: 401, count: 3) + Array(repeating: 429, count: throttled))
        #expect(limiter.throttledFailures == UInt64(throttled))
        #expect(try Self.lines(path).map { $0["status"] as? Int } == [401, 401, 401], "no line for a 429")
        #expect(application.respond(to: Self.post("Bearer \(admin)", body: "{}")).status == 400, "a valid token is never limited")
    }

    /// The head alone decides a refusal (the transport then never reads the body); an admitted
    /// head returns nil, and the chain answers the whole request later.
    @Test func theHeadAloneIsRefusedOrAdmitted() throws {
        let path = ObserveTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let macs = Count()
        let (application, admin) = try Self.application(auditPath: path, macs: macs)
        func head(_ method: HTTPMethod, _ path: String, _ token: String?) -> HTTPRequest {
            HTTPRequest(method: method, path: path, headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [])
        }
        #expect(application.respond(toHead: head(.post, "/v1/admin/clients", "kc_forged"))?.status == 401)
        #expect(application.respond(toHead: head(.post, "/v1/admin/clients", nil))?.status == 401)
        #expect(application.respond(toHead: head(.post, "/v1/no/such", admin))?.status == 404)
        #expect(application.respond(toHead: head(.put, "/v1/admin/clients", admin))?.status == 405)
        #expect(application.respond(toHead: head(.post, "/v1/admin/clients", admin)) == nil)
        #expect(macs.now == 0)
        #expect(try Self.lines(path).map { $0["status"] as? Int } == [401, 401, 404, 405], "refused heads are audited once")
    }
}
