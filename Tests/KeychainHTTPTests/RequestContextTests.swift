import Foundation
import KeychainAPI
import KeychainCore
import KeychainObservability
import KeychainTestSupport
import Logging
import Synchronization
import Testing

@testable import KeychainHTTP

/// The handler and the auditor read one decoded request (the audit line's reference taken from the
/// typed answer is KeychaindAppTests' `AuditLineTests`, on the real app).
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
        let server = try ItemRoutesApp(auditor: auditor)
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

/// The item routes over in-memory stores with a given auditor: the chain's order seen through a
/// MAC that counts its calls (the real app's MAC is the keyring's, and is not counted).
struct ItemRoutesApp {
    let application: KeychainApplication
    let adminToken: String

    init(auditor: Auditor) throws {
        let clients = InMemoryClientStore()
        let tokens = TestTokenIssuer()
        var router = Router()
        router.addItemRoutes(
            service: KeychainService(store: InMemoryItemStore(), certificateParser: StubCertificateParser(), cursors: .forTests))
        application = KeychainApplication(
            router: router, authenticator: Authenticator(clients: clients, tokens: tokens), logger: ObserveTests.noLog,
            auditor: auditor)
        let (token, hash) = tokens.newToken()
        try clients.addClient(Client(name: "root", accessGroups: ["root"], role: .admin, createdAt: Date()), tokenHash: hash)
        adminToken = token
    }

    func send(_ method: HTTPMethod, _ target: String, token: String?, body: String? = nil) -> HTTPResponse {
        let parts = target.split(separator: "?", maxSplits: 1)
        let query: [HTTPRequest.QueryItem] = parts.count > 1
            ? parts[1].split(separator: "&").map { pair in
                let nameValue = pair.split(separator: "=", maxSplits: 1)
                return HTTPRequest.QueryItem(name: String(nameValue[0]), value: nameValue.count > 1 ? String(nameValue[1]) : "")
            } : []
        var headers: [(name: String, value: String)] = []
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        return application.respond(to: HTTPRequest(
            method: method, path: String(parts[0]), queryItems: query, headers: headers, body: Array((body ?? "").utf8)))
    }
}
