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
            // The TTL granted, the role's tokenTTL, as OpenBao answers it (not the seconds left by now).
            #expect(auth["lease_duration"] as? Int == 600 && auth["renewable"] as? Bool == true)
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
        // A tool written for Vault (it sends X-Vault-Request) reads Vault's envelope: the top-level
        // `renewable` is the lease's, false, as OpenBao answers; the token's is in `auth`.
        let body = try JSONSerialization.data(withJSONObject: ["role": "payments", "jwt": try fixture.issuer.mint()])
        let vaultTool = try fixture.http.send("POST", "/v1/auth/jwt/login", headers: ["X-Vault-Request": "true"], body: body)
        #expect(vaultTool.status == 200 && vaultTool.json["renewable"] as? Bool == false)
        #expect((vaultTool.json["auth"] as? [String: Any])?["renewable"] as? Bool == true)
        #expect((vaultTool.json["auth"] as? [String: Any])?["lease_duration"] as? Int == 600)
    }

    /// Every check a JWT must pass, each refused 401 errSecAuthFailed naming it (and Vault's
    /// `errors`), never echoing the token or a claim's value.
    @Test func everyCheckRefusesAndNamesWhatFailed() throws {
        let fixture = try Fixture()
        let issuer = fixture.issuer
        let now = Int(Date().timeIntervalSince1970)
        let cases: [(String, String, String)] = [
            ("unknown role", try issuer.mint(), "nobody"),
            ("issuer", try issuer.mint(claims: ["iss": "https://evil.example"]), "payments"),
            ("audience", try issuer.mint(claims: ["aud": "someone-else"]), "payments"),
            ("audience", try issuer.mint(omit: ["aud"]), "payments"),
            ("expired", try issuer.mint(claims: ["exp": now - 120]), "payments"),
            ("expired", try issuer.mint(omit: ["exp"]), "payments"),
            ("not yet valid", try issuer.mint(claims: ["nbf": now + 600]), "payments"),
            ("not yet valid", try issuer.mint(claims: ["iat": now + 600]), "payments"),
            ("subject", try issuer.mint(claims: ["sub": "system:serviceaccount:billing:api"]), "payments"),
            ("claim /kubernetes.io/namespace", try issuer.mint(claims: ["kubernetes.io": ["namespace": "billing"]]), "payments"),
            ("algorithm", try issuer.mint(alg: "PS256"), "payments"),
            ("algorithm", try issuer.mint(alg: "HS256"), "payments"),
            ("signature", try issuer.mint(key: "stray-rsa"), "payments"),
            ("signature", try issuer.mint(kid: .value("rs256"), key: "stray-rsa"), "payments"),
            ("signature", try issuer.mint(embedJWK: true), "payments"),
            ("signature", try issuer.mint(alg: "ES256", kid: .value("es256"), key: "es384"), "payments"),
        ]
        for (detail, jwt, role) in cases {
            let answer = try fixture.login(jwt, role: role)
            #expect(answer.status == 401, "\(detail): \(answer.text)")
            #expect(answer.json["error"] as? String == "errSecAuthFailed")
            #expect(answer.json["detail"] as? String == detail, "\(answer.text)")
            #expect((answer.json["errors"] as? [String])?.count == 1)
            #expect(!answer.text.contains(jwt) && !answer.text.contains("billing") && !answer.text.contains("evil"))
        }
        // Forms that are no compact JWS, and unsafe headers.
        for jwt in [try issuer.mint(alg: "none"), try issuer.mint(headers: ["crit": ["exp"]]), try issuer.mint(headers: ["b64": false]),
                    "a.b.c.d.e", "{\"payload\":\"x\"}", ""] {
            let answer = try fixture.login(jwt)
            #expect(answer.status == 401, "\(answer.text)")
        }
        // A body that is not a login.
        #expect(try fixture.http.json("POST", "/v1/auth/jwt/login", ["role": "payments"]).status == 400)
        #expect(try fixture.http.json("POST", "/v1/auth/jwt/login", ["role": "payments", "jwt": "x", "extra": 1]).status == 400)
        let metrics = try fixture.http.send("GET", "/v1/metrics", token: fixture.admin)
        #expect(metrics.text.contains(#"keychaind_logins_total{role="payments",outcome="refused"}"#), "\(metrics.text)")
        #expect(metrics.text.contains(#"keychaind_logins_total{role="",outcome="refused"}"#))
    }

    /// What a role must be: bound to a subject or a claim, never the issuer's own audience
    /// (unless allowed), a name of `[a-z0-9._-]`, no reserved group, usable keys.
    @Test func rolesAreCheckedWhenPut() throws {
        let fixture = try Fixture()
        var role = fixture.defaultRole()
        role["boundSubject"] = nil
        role["boundClaims"] = ["/kubernetes.io/namespace": "*"]
        let unbound = try fixture.putRole("loose", role)
        #expect(unbound.status == 400 && (unbound.json["detail"] as? String ?? "").contains("bind"), "\(unbound.text)")
        role = fixture.defaultRole()
        role["audiences"] = [fixture.issuer.issuer]
        #expect(try fixture.putRole("issuer-audience", role).status == 400)
        role["allowIssuerAudience"] = true
        #expect(try fixture.putRole("issuer-audience", role).status == 200)
        #expect(try fixture.putRole("Payments", fixture.defaultRole()).status == 400)
        role = fixture.defaultRole()
        role["accessGroups"] = ["keychaind.refresh"]
        #expect(try fixture.putRole("reserved", role).status == 400)
        role = fixture.defaultRole()
        role["publicKeys"] = ["-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"]
        #expect(try fixture.putRole("bad-pem", role).status == 400)
        role["jwksURL"] = fixture.issuer.jwksURL
        #expect(try fixture.putRole("both", role).status == 400)
        role = fixture.defaultRole()
        role["jwksURL"] = "http://issuer.example/jwks"
        #expect(try fixture.putRole("plain-http", role).status == 400)
        role = fixture.defaultRole()
        role["algorithms"] = ["HS256"]
        #expect(try fixture.putRole("hmac", role).status == 400)
        let read = try fixture.http.send("GET", "/v1/admin/auth/jwt/roles/payments", token: fixture.admin)
        #expect((read.json["role"] as? [String: Any])?["issuer"] as? String == fixture.issuer.issuer)
        let list = try fixture.http.send("GET", "/v1/admin/auth/jwt/roles", token: fixture.admin)
        #expect(((list.json["roles"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String } == ["issuer-audience", "payments"])
        #expect(try fixture.http.send("GET", "/v1/admin/auth/jwt/roles/payments", token: try fixture.loginToken()).status == 403)
    }

    /// PEM keys and a JWKS URL serve as well as discovery; a key the issuer rotates in is
    /// accepted within 10 seconds, and random kids do not make keychaind hammer the issuer.
    @Test func keysFromPEMsAndAJWKSURLAndRotation() throws {
        let fixture = try Fixture()
        var pemRole = fixture.defaultRole()
        pemRole["publicKeys"] = [try fixture.issuer.publicPEM(alg: "RS256"), try fixture.issuer.publicPEM(alg: "ES256")]
        #expect(try fixture.putRole("pem", pemRole).status == 200)
        #expect(try fixture.login(try fixture.issuer.mint(alg: "ES256"), role: "pem").status == 200)
        #expect(try fixture.login(try fixture.issuer.mint(alg: "EdDSA"), role: "pem").json["detail"] as? String == "signature")

        var jwksRole = fixture.defaultRole()
        jwksRole["jwksURL"] = fixture.issuer.jwksURL
        #expect(try fixture.putRole("jwks", jwksRole).status == 200)
        #expect(try fixture.login(try fixture.issuer.mint(), role: "jwks").status == 200)
        let before = try fixture.issuer.stats().jwks
        // Unknown kids: at most one refetch per 10 s, whatever caused the last.
        for index in 0..<20 {
            _ = try fixture.login(try fixture.issuer.mint(kid: .value("random-\(index)"), key: "stray-rsa"), role: "jwks")
        }
        #expect(try fixture.issuer.stats().jwks - before <= 1)
        // A rotated-in key: accepted within ten seconds of the last fetch.
        _ = try fixture.issuer.rotate(alg: "RS256", keep: false)
        let rotated = try fixture.issuer.mint()
        let started = Date()
        var accepted = false
        while !accepted, Date().timeIntervalSince(started) < 20 {
            accepted = try fixture.login(rotated, role: "jwks").status == 200
            if !accepted { Thread.sleep(forTimeInterval: 0.5) }
        }
        #expect(accepted)
        // Ten seconds after the last fetch at most, and a login's time on a loaded machine.
        #expect(Date().timeIntervalSince(started) < 14)
    }

    /// A role's tokens: bounded in number, expiring at the role's TTL and renewing up to its cap,
    /// revoked when the role narrows or goes (not when it widens); logins work while locked.
    @Test func aRolesTokensAreBoundedExpireAndGoWithTheRole() throws {
        var role: [String: Any] = [:]
        let fixture = try Fixture()
        role = fixture.defaultRole()
        role["maxLiveTokens"] = 2
        role["tokenTTL"] = 3
        role["tokenMaxTTL"] = 5
        #expect(try fixture.putRole("payments", role).status == 200)
        let first = try fixture.loginToken()
        let second = try fixture.loginToken()
        let third = try fixture.login(try fixture.issuer.mint())
        #expect(third.status == 429, "\(third.text)")
        let renewed = try fixture.http.json("POST", "/v1/auth/token/renew-self", ["increment": 60], token: first)
        #expect(renewed.status == 200, "\(renewed.text)")
        #expect(renewed.json["expiresAt"] as? String == renewed.json["maxExpiresAt"] as? String)
        var expired = try fixture.http.send("GET", "/v1/auth/token/self", token: second)
        #expect(waitUntil(timeout: 10) {
            expired = (try? fixture.http.send("GET", "/v1/auth/token/self", token: second)) ?? expired
            return expired.status == 401
        })
        #expect(expired.status == 401 && expired.json["detail"] as? String == "token expired")
        // Expired tokens do not count against the bound.
        let fresh = try fixture.loginToken()

        // Widening (a group, an audience) keeps tokens; narrowing revokes them.
        role["accessGroups"] = ["payments", "shared"]
        role["audiences"] = [OIDCIssuer.audience, "other"]
        role["tokenTTL"] = 600
        role["tokenMaxTTL"] = 3600
        role["maxLiveTokens"] = 100
        #expect(try fixture.putRole("payments", role).status == 200)
        #expect(try fixture.http.send("GET", "/v1/auth/token/self", token: fresh).status == 200)
        let widened = try fixture.loginToken()
        role["audiences"] = [OIDCIssuer.audience]
        #expect(try fixture.putRole("payments", role).status == 200)
        #expect(try fixture.http.send("GET", "/v1/auth/token/self", token: widened).status == 401)
        #expect(try fixture.http.send("GET", "/v1/auth/token/self", token: fresh).status == 401)

        // While locked, logins and self-service keep working; removing the role revokes.
        #expect(try fixture.http.send("POST", "/v1/admin/lock", token: fixture.admin).status == 200)
        let locked = try fixture.loginToken()
        #expect(try fixture.http.send("GET", "/v1/auth/token/self", token: locked).status == 200)
        #expect(try fixture.http.send("POST", "/v1/admin/unlock", token: fixture.admin).status == 200)
        #expect(try fixture.http.send("DELETE", "/v1/admin/auth/jwt/roles/payments", token: fixture.admin).status == 200)
        #expect(try fixture.http.send("GET", "/v1/auth/token/self", token: locked).status == 401)
        #expect(try fixture.login(try fixture.issuer.mint()).json["detail"] as? String == "unknown role")
        #expect(try fixture.http.send("DELETE", "/v1/admin/auth/jwt/roles/payments", token: fixture.admin).status == 404)
    }

    /// Refused logins spend the address's failed-authentication budget (past it even a valid
    /// login is refused before its body is read) and the role's; a body over 16 KiB is 413.
    @Test func refusedLoginsSpendTheAddressAndRoleBudgets() throws {
        let perRole = try Fixture(environment: ["KEYCHAIND_LIMITS_LOGIN_FAILURES_PER_ROLE_PER_MINUTE": "2",
                                                "KEYCHAIND_LIMITS_AUTH_FAILURES_PER_MINUTE": "100"])
        let bad = try perRole.issuer.mint(claims: ["aud": "nobody"])
        #expect(try perRole.login(bad).status == 401)
        #expect(try perRole.login(bad).status == 401)
        let throttled = try perRole.login(bad)
        #expect(throttled.status == 429 && throttled.headers["retry-after"] != nil, "\(throttled.text)")
        #expect(try perRole.login(try perRole.issuer.mint()).status == 200)

        let perAddress = try Fixture(environment: ["KEYCHAIND_LIMITS_AUTH_FAILURES_PER_MINUTE": "2"])
        let wrong = try perAddress.issuer.mint(claims: ["aud": "nobody"])
        #expect(try perAddress.login(wrong).status == 401)
        #expect(try perAddress.login(wrong).status == 401)
        #expect(try perAddress.login(wrong).status == 429)
        #expect(try perAddress.login(try perAddress.issuer.mint()).status == 429)

        let large = try perRole.http.json("POST", "/v1/auth/jwt/login", ["role": "payments", "jwt": String(repeating: "a", count: 17_000)])
        #expect(large.status == 413, "\(large.text)")
        let audit = try String(contentsOf: perRole.server.dataDir.appendingPathComponent("audit.log"), encoding: .utf8)
        let line = audit.split(separator: "\n").last { $0.contains(#""route":"/auth/jwt/login""#) && $0.contains(#""status":200"#) }
        #expect(line?.contains(#""loginRole":"payments""#) == true && line?.contains(#""subject":"\#(OIDCIssuer.subject)""#) == true, "\(line ?? "")")
        #expect(line?.contains(#""client":"jwt:payments""#) == true && line?.contains(#""accessor":"kca_"#) == true)
    }

    /// An issuer that cannot be reached and has never been: a login is 503, not the caller's
    /// fault; a discovery document naming another issuer is refused the same way.
    @Test func anUnreachableOrLyingIssuerIsUnavailable() throws {
        let fixture = try Fixture()
        try fixture.issuer.control(discoveryIssuer: "https://elsewhere.example")
        let lying = try fixture.login(try fixture.issuer.mint())
        #expect(lying.status == 503 && lying.json["error"] as? String == "errSecNotAvailable", "\(lying.text)")
        try fixture.issuer.control(discoveryIssuer: nil)
        var role = fixture.defaultRole()
        role["jwksURL"] = fixture.issuer.jwksURL
        #expect(try fixture.putRole("down", role).status == 200)
        try fixture.issuer.control(jwks: "error")
        #expect(try fixture.login(try fixture.issuer.mint(), role: "down").status == 503)
        let metrics = try fixture.http.send("GET", "/v1/metrics", token: fixture.admin)
        #expect(metrics.text.contains(#"keychaind_logins_total{role="down",outcome="keys_unavailable"} 1"#), "\(metrics.text)")
    }

    /// Successful logins are always audited, whatever the budget of lines for requests without
    /// a token; refused ones stay within it.
    @Test func everySuccessfulLoginIsAudited() throws {
        let fixture = try Fixture(environment: ["KEYCHAIND_AUDIT_UNAUTHENTICATED_LINES_PER_MINUTE": "1"])
        for _ in 0..<3 { _ = try fixture.loginToken() }
        for _ in 0..<3 { _ = try fixture.login(try fixture.issuer.mint(claims: ["aud": "nobody"])) }
        let audit = try String(contentsOf: fixture.server.dataDir.appendingPathComponent("audit.log"), encoding: .utf8)
        let logins = audit.split(separator: "\n").filter { $0.contains(#""route":"/auth/jwt/login""#) }
        #expect(logins.filter { $0.contains(#""status":200"#) }.count == 3, "\(logins)")
        #expect(logins.filter { $0.contains(#""status":401"#) }.count <= 1, "\(logins)")
    }
}

extension WorkloadLoginTests.Fixture {
    /// A token from a successful login under `payments`.
    func loginToken() throws -> String {
        let answer = try login(try issuer.mint())
        return try #require(answer.json["token"] as? String, "\(answer.text)")
    }
}
