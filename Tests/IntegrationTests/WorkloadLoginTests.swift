import Foundation
import KeychaindTesting
import Testing

/// Workload login against a real OpenID Connect issuer on loopback (`oidc_issuer.py`, tokens
/// minted by PyJWT) and the app served in process: roles, every check of a JWT, the tokens a
/// login issues, and what narrows or removes a role.
@Suite struct WorkloadLoginTests {
    /// A server, an issuer, and a role `payments` over the issuer's discovery document.
    final class Fixture {
        let issuer: OIDCIssuer
        let server: InProcessKeychaind
        let http: HTTPTestClient
        let admin: String

        init(environment: [String: String] = [:], role: [String: Any]? = nil) throws {
            issuer = try OIDCIssuer()
            server = try InProcessKeychaind(environment: environment)
            http = server.client()
            admin = server.adminToken()
            let put = try putRole("payments", role ?? defaultRole())
            #expect(put.status == 200, "\(put.text)")
        }

        deinit {
            server.stop()
            issuer.stop()
        }

        func defaultRole() -> [String: Any] {
            [
                "issuer": issuer.issuer, "audiences": [OIDCIssuer.audience], "boundSubject": "system:serviceaccount:payments:*",
                "boundClaims": ["/kubernetes.io/namespace": "payments"], "accessGroups": ["payments"],
                "algorithms": ["RS256", "ES256", "EdDSA"],
            ]
        }

        func putRole(_ name: String, _ body: [String: Any]) throws -> HTTPTestClient.Response {
            try http.json("PUT", "/v1/admin/auth/jwt/roles/\(name)", body, token: admin)
        }

        func login(_ jwt: String, role: String = "payments", path: String = "/v1/auth/jwt/login") throws -> HTTPTestClient.Response {
            try http.json("POST", path, ["role": role, "jwt": jwt])
        }
    }

    @Test func aWorkloadLogsInWithRS256ES256AndEdDSATokensAndGetsAShortLivedToken() throws {
        let fixture = try Fixture()
        for alg in ["RS256", "ES256", "EdDSA"] {
            let jwt = try fixture.issuer.mint(alg: alg)
            let login = try fixture.login(jwt)
            #expect(login.status == 200, "\(alg): \(login.text)")
            let json = login.json
            let token = try #require(json["token"] as? String)
            #expect(token.hasPrefix("kc_"))
            #expect(json["name"] as? String == "jwt:payments" && json["subject"] as? String == OIDCIssuer.subject)
            #expect(json["accessGroups"] as? [String] == ["payments"] && json["renewable"] as? Bool == true)
            #expect((json["ttl"] as? Int).map { $0 > 590 && $0 <= 600 } == true)
            #expect((json["accessor"] as? String)?.hasPrefix("kca_") == true)
            let auth = try #require(json["auth"] as? [String: Any])
            #expect(auth["client_token"] as? String == token && auth["accessor"] as? String == json["accessor"] as? String)
            #expect(auth["policies"] as? [String] == ["payments"] && auth["token_type"] as? String == "service")
            #expect((auth["metadata"] as? [String: String]) == ["role": "payments", "subject": OIDCIssuer.subject])
            #expect(!login.text.contains(jwt))
            // The token works within its role's groups and nowhere else.
            let add = try fixture.http.json(
                "POST", "/v1/items/genericPassword", ["service": "db-\(alg)", "account": "app", "value": "s3cret"], token: token)
            #expect(add.status == 201, "\(add.text)")
            #expect(try fixture.http.send("GET", "/v1/admin/clients", token: token).status == 403)
            let me = try fixture.http.send("GET", "/v1/auth/token/self", token: token)
            #expect(me.json["source"] as? String == "jwt:payments")
        }
        // The same login under the path Kubernetes tooling uses; the role name is lowercased.
        let kubernetes = try fixture.login(try fixture.issuer.mint(), role: "PAYMENTS", path: "/v1/auth/kubernetes/login")
        #expect(kubernetes.status == 200, "\(kubernetes.text)")
        // Login tokens belong to no client.
        let clients = try fixture.http.send("GET", "/v1/admin/clients", token: fixture.admin)
        #expect(!clients.text.contains("jwt:"))
        let listed = try fixture.http.send("GET", "/v1/admin/tokens?role=payments", token: fixture.admin)
        #expect((listed.json["tokens"] as? [Any])?.count == 4)
    }
}
