import Foundation
import KeychainAPI
import KeychainCore
import KeychainObservability
import Synchronization
import Testing

@testable import KeychainHTTP

/// The handler and the auditor read one decoded request; the audit line's reference comes from
/// the typed answer.
struct RequestContextTests {
    static func context(body: String) -> RequestContext {
        RequestContext(request: HTTPRequest(method: .post, path: "/", body: Array(body.utf8)), parameters: [:])
    }

    @Test func theBodyIsOneJSONObjectOrErrSecParam() throws {
        #expect(try Self.context(body: #"{"a":1}"#).jsonBody().members.map(\.0) == ["a"])
        let bad = Self.context(body: "[1]")
        for _ in 0..<2 {
            #expect(throws: KeychainError.param("the body must be a JSON object, not an array")) { try bad.jsonBody() }
        }
        #expect(throws: KeychainError.param("the body is not valid JSON: unexpected end of JSON at byte 0")) {
            try Self.context(body: "").jsonBody()
        }
    }

    @Test func anAddsAuditLineNamesTheItemItsAnswerNames() throws {
        let path = ObserveTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        // failClosed: every line is written on the request's thread, before its answer.
        let auditor = Auditor(
            sink: AuditLog(file: AuditFile(path: path), failClosed: true, logger: ObserveTests.noLog), mac: SHA256Stub.mac)
        let server = try TestServer(auditor: auditor)
        let bodies = [
            #"{"service":"a","value":"x"}"#, #"{"service":"b","value":"x","return":"none"}"#,
            #"{"service":"c","value":"x","return":"data"}"#, #"{"service":"d","label":5}"#,
        ]
        let answers = bodies.map { server.send(.post, "/v1/items/genericPassword", token: server.adminToken, body: $0) }
        #expect(answers.map(\.status) == [201, 201, 201, 400])
        let outcomes = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
            .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["route"] as? String == "/items/{class}" && $0["phase"] == nil }
        #expect(outcomes.count == 4)
        #expect(outcomes[0]["persistentRef"] as? String == answers[0].item?["persistentRef"]?.stringValue)
        #expect(outcomes[0]["persistentRef"] != nil)
        #expect(outcomes[1]["persistentRef"] == nil && outcomes[2]["persistentRef"] == nil, "the answer names no item")
        #expect(outcomes[3]["persistentRef"] == nil)
        #expect(
            (outcomes[3]["attributes"] as? [String: String]).map { Set($0.keys) } == ["service", "label"],
            "a refused body's attributes are recorded too")
    }
}

/// Authentication comes before the audit subject: a refused caller's request costs no HMAC
/// (nor the body parse the subject would need), and is refused on its head alone.
struct AuditSubjectOrderTests {
    final class Count: Sendable {
        let value = Mutex(0)
    }

    @Test func aRefusedCallerGetsItsAuditLineWithoutAnyTag() throws {
        let macs = Count()
        let auditor = Auditor(sink: ObserveTests.discard) { message, mac in
            macs.value.withLock { $0 += 1 }
            return SHA256Stub.mac(message, mac)
        }
        let server = try TestServer(auditor: auditor)
        let refused = server.send(.post, "/v1/items/genericPassword", token: "kc_wrong", body: #"{"service":"a"}"#)
        #expect(refused.status == 401)
        #expect(macs.value.withLock { $0 } == 0)
        // On the transport, the head alone is refused: the body is never read, let alone parsed.
        let head = HTTPRequest(
            method: .post, path: "/v1/items/genericPassword", headers: [("Authorization", "Bearer kc_wrong")])
        #expect(server.application.respond(toHead: head)?.status == 401)
        let admitted = HTTPRequest(
            method: .post, path: "/v1/items/genericPassword", headers: [("Authorization", "Bearer \(server.adminToken)")])
        #expect(server.application.respond(toHead: admitted) == nil, "a valid token's body is read")
        #expect(macs.value.withLock { $0 } == 0)
        let accepted = server.send(.get, "/v1/items/genericPassword?service=a", token: server.adminToken)
        #expect(accepted.status == 404)
        #expect(macs.value.withLock { $0 } == 1, "the query's one attribute, once authenticated")
    }
}
