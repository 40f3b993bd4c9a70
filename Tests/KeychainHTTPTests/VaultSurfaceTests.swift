import Foundation
import KeychainAPI
import KeychainCore
import KeychainTestSupport
import Logging
import Testing

@testable import KeychainHTTP

/// The Vault surface's conventions in the chain: `X-Vault-Token`, namespaces, and Vault's error
/// shape on `.vault` routes (and on the self-service routes called with `X-Vault-Token`).
struct VaultSurfaceTests {
    let application: KeychainApplication
    let token: String

    /// `/vault/fail/{code}` (Vault's surface) and `/native/fail/{code}` throw the OSStatus named
    /// by `code`; `/vault/ok` answers 200; the self-service routes are the real ones.
    init(limiter: AuthFailureLimiter? = nil) throws {
        let clients = InMemoryClientStore()
        let tokens = TestTokenIssuer()
        var router = Router()
        for (prefix, surface) in [("vault", RouteSurface.vault), ("native", .native)] {
            router.add(.get, "/\(prefix)/fail/{code}", access: .client, audit: .none, surface: surface) { context in
                throw Self.errors[context.parameters["code"] ?? ""] ?? KeychainError.io("no such case")
            }
        }
        router.add(.list, "/vault/ok", access: .client, audit: .none, surface: .vault) { _ in .json(StatusAnswer.done) }
        router.addAuthTokenRoutes(clients: clients)
        application = KeychainApplication(
            router: router, authenticator: Authenticator(clients: clients, tokens: tokens),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), authFailureLimiter: limiter)
        let (token, hash) = tokens.newToken()
        try clients.addClient(Client(name: "app", accessGroups: ["team"], role: .client, createdAt: Date()), tokenHash: hash)
        self.token = token
    }

    static let errors: [String: KeychainError] = [
        "param": .param("cas mismatch"), "notFound": .itemNotFound("no such secret"),
        "entitlement": .missingEntitlement("not your group"), "locked": .interactionNotAllowed("the vault is locked"),
        "storage": KeychainError(.io, "the database is unreachable", temporary: true), "quota": KeychainError(.diskFull, "group quota exceeded"),
        "io": .io("disk on fire"), "duplicate": .duplicateItem("exists"),
        "refresh": KeychainError(.serviceNotAvailable, "the token endpoint answered invalid_grant"),
    ]

    func send(_ method: HTTPMethod = .get, _ path: String, _ headers: [(String, String)]) -> HTTPResponse {
        application.respond(to: HTTPRequest(method: method, path: path, headers: headers.map { (name: $0.0, value: $0.1) }))
    }

    func json(_ response: HTTPResponse) -> JSONValue { (try? JSONValue.parse(response.body)) ?? .null }

    func errors(_ response: HTTPResponse) -> [String]? {
        guard case .object(let members) = json(response), members.count == 1, case .array(let list)? = json(response)["errors"]
        else { return nil }
        return list.compactMap { if case .string(let text) = $0 { text } else { nil } }
    }

    @Test func aTokenInXVaultTokenIsAccepted() {
        #expect(send(.list, "/v1/vault/ok", [("X-Vault-Token", token)]).status == 200)
        #expect(send(.list, "/v1/vault/ok", [("X-Vault-Token", token), ("Authorization", "Bearer \(token)")]).status == 200)
        #expect(send(.list, "/v1/vault/ok", [("X-Vault-Token", token), ("X-Vault-Request", "true")]).status == 200)
        // A proxy's own credentials beside the token are not keychaind's.
        #expect(send(.list, "/v1/vault/ok", [("X-Vault-Token", token), ("Authorization", "Basic dTpw")]).status == 200)
        // An empty X-Vault-Token is none.
        #expect(send(.list, "/v1/vault/ok", [("X-Vault-Token", ""), ("Authorization", "Bearer \(token)")]).status == 200)
    }

    @Test func twoDifferentTokensAreRefusedWithoutEchoingEither() {
        let other = "kc_" + String(repeating: "A", count: 43)
        for path in ["/v1/vault/ok", "/v1/native/fail/param"] {
            let answer = send(path.hasPrefix("/v1/vault") ? .list : .get, path, [("X-Vault-Token", other), ("Authorization", "Bearer \(token)")])
            #expect(answer.status == 400)
            let text = String(decoding: answer.body, as: UTF8.self)
            #expect(text.contains("different tokens") && !text.contains(token) && !text.contains(other))
        }
    }

    @Test(arguments: ["", "root", "/"])
    func theRootNamespaceIsAccepted(_ namespace: String) {
        #expect(send(.list, "/v1/vault/ok", [("X-Vault-Token", token), ("X-Vault-Namespace", namespace)]).status == 200)
    }

    @Test(arguments: ["team", "root/team", "admin/"])
    func otherNamespacesAreRefused(_ namespace: String) {
        let vault = send(.list, "/v1/vault/ok", [("X-Vault-Token", token), ("X-Vault-Namespace", namespace)])
        #expect(vault.status == 400 && errors(vault) == ["namespaces are not supported"])
        // Before authentication: no token needed to be told.
        let native = send(.get, "/v1/native/fail/param", [("X-Vault-Namespace", namespace)])
        #expect(native.status == 400 && json(native)["detail"] == .string("namespaces are not supported"))
    }

    @Test(arguments: [
        ("param", 400, ["cas mismatch"]), ("notFound", 404, []), ("entitlement", 403, ["permission denied"]),
        ("locked", 503, ["Vault is sealed"]), ("storage", 503, ["the database is unreachable"]),
        ("quota", 400, ["group quota exceeded"]), ("io", 500, ["internal error"]), ("duplicate", 400, ["exists"]),
        ("refresh", 502, ["the token endpoint answered invalid_grant"]),
    ])
    func errorsOnTheVaultSurfaceAreVaultsShape(_ code: String, _ status: Int, _ messages: [String]) {
        let answer = send(.get, "/v1/vault/fail/\(code)", [("X-Vault-Token", token)])
        #expect(answer.status == status && errors(answer) == messages)
        #expect(answer.headers.contains { $0 == ("Content-Type", "application/json") })
        #expect(answer.headers.contains { $0 == ("Cache-Control", "no-store") })
        // The native route keeps keychaind's shape.
        let native = send(.get, "/v1/native/fail/\(code)", [("X-Vault-Token", token)])
        #expect(json(native)["status"] == .integer(Int64(Self.errors[code]!.status)))
    }

    @Test func aRefusedTokenIsPermissionDeniedOnTheVaultSurface() {
        for headers in [[], [("X-Vault-Token", "kc_forged")], [("Authorization", "Bearer kc_forged")], [("Authorization", "Basic x")]] {
            let answer = send(.get, "/v1/vault/fail/param", headers)
            #expect(answer.status == 403 && errors(answer) == ["permission denied"])
            #expect(!answer.headers.contains { $0.name == "WWW-Authenticate" })
        }
    }

    @Test func theSelfRoutesAnswerInTheShapeOfTheHeaderTheTokenCameIn() {
        for (method, path) in [(HTTPMethod.get, "/v1/auth/token/lookup-self"), (.post, "/v1/auth/token/renew-self"), (.post, "/v1/auth/token/revoke-self")] {
            let vault = send(method, path, [("X-Vault-Token", "kc_forged")])
            #expect(vault.status == 403 && errors(vault) == ["permission denied"])
            let native = send(method, path, [("Authorization", "Bearer kc_forged")])
            #expect(native.status == 401 && json(native)["status"] == .integer(-25293))
        }
        let renewed = send(.post, "/v1/auth/token/renew-self", [("X-Vault-Token", token)])
        #expect(renewed.status == 400 && errors(renewed) == ["this token is not renewable: it never expires"])
    }

    @Test func theFailedAuthLimitAnswersInVaultsShape() throws {
        let limited = try VaultSurfaceTests(limiter: AuthFailureLimiter(failuresPerMinute: 1, maxAddresses: 10))
        #expect(limited.send(.get, "/v1/vault/fail/param", [("X-Vault-Token", "kc_forged")]).status == 403)
        let throttled = limited.send(.get, "/v1/vault/fail/param", [("X-Vault-Token", "kc_forged")])
        #expect(throttled.status == 429 && errors(throttled)?.first?.hasPrefix("too many failed authentications") == true)
        #expect(throttled.headers.contains { $0.name == "Retry-After" })
    }

    @Test func theTransportsRefusalsTakeTheRoutesShape() {
        let tooLarge = KeychainError.param("request body exceeds the limit of 10 bytes")
        let vault = application.refusal(tooLarge, status: 413, to: HTTPRequest(method: .get, path: "/v1/vault/fail/x"))
        #expect(vault.status == 413 && errors(vault) == ["request body exceeds the limit of 10 bytes"])
        let native = application.refusal(tooLarge, status: 413, to: HTTPRequest(method: .get, path: "/v1/native/fail/x"))
        #expect(native.status == 413 && json(native)["status"] == .integer(-50))
        let selfRoute = application.refusal(
            tooLarge, status: 413,
            to: HTTPRequest(method: .post, path: "/v1/auth/token/renew-self", headers: [("X-Vault-Token", token)]))
        #expect(selfRoute.status == 413 && errors(selfRoute) != nil)
    }

    @Test func credentialsNameTheirHeader() throws {
        let bearer = try Credentials(HTTPRequest(method: .get, path: "/", headers: [("Authorization", "Bearer abc")]))
        #expect(bearer.token == "abc" && bearer.header == .authorization)
        let vault = try Credentials(HTTPRequest(method: .get, path: "/", headers: [("X-Vault-Token", "abc")]))
        #expect(vault.token == "abc" && vault.header == .vaultToken)
        let malformed = try Credentials(HTTPRequest(method: .get, path: "/", headers: [("Authorization", "Basic abc")]))
        #expect(malformed.token == nil && malformed.header == .authorization)
        let none = try Credentials(HTTPRequest(method: .get, path: "/"))
        #expect(none.token == nil && none.header == nil)
    }
}
