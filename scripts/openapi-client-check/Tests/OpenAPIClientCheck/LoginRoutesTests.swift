import Foundation
import Testing

/// Workload login through the generated client: a login role with a PEM key put (bound claims
/// as a glob and as a list), read, listed and removed; a role that binds nothing is errSecParam;
/// refused logins (a malformed JWT on the jwt path, an unknown role on the kubernetes path) are
/// 401 errSecAuthFailed naming the check, with Vault's `errors`. (A successful login needs a JWT
/// signed by the role's key: scripts/api_vault_sequence.py and the integration tests sign them.)
@Suite struct LoginRoutesTests {
    /// An RSA 2048 public key (its private key was thrown away: no JWT verifies under it).
    static let publicKey = """
        -----BEGIN PUBLIC KEY-----
        MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwadHR81E4iHmC+2d5HRp
        JAqlBy8XwyKpoI8LG0fobnz+8xN4gpvEev+s2PvoHX1IKSbX6pjs+krk9TUuF36P
        tUQCWNUzoXEaGqjxwrfRzNu0/DXIvYGpsGLWfVUq8nL8vAd9WB/UbkMdHAQ58308
        8aNpoTDhz2cXTvoRXBuCrQV/Au3ce3YGG42VJyXOnEFDYE0yBPNZHBzIYqjoqYnC
        dVA/PE+fYVCK0w+0eA1uG4R07iqzcLacgqPSsMvBp7/oF3kMlXkPNfzA9LuuV8YL
        L2PlZIz12/sIGhTkT18LZ1nTjjs/xBXKUIxPBTPprSr8JfsEibSAQh4Ak6gcz0vu
        KQIDAQAB
        -----END PUBLIC KEY-----

        """

    @Test func rolesAreKeptAndRefusedLoginsSayWhy() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let admin = server.admin

        #expect(try await admin.listLoginRoles().ok.body.json.roles.isEmpty)
        let input = Components.Schemas.LoginRoleInput(
            issuer: "https://issuer.example", publicKeys: [Self.publicKey], audiences: ["keychaind"],
            boundClaims: .init(additionalProperties: [
                "/kubernetes.io/namespace": .case1("payments"), "repository": .case2(["example/a", "example/b*"]),
            ]),
            algorithms: [.rs256], accessGroups: ["payments"], tokenTTL: 300)
        let put = try await admin.putLoginRole(path: .init(role: "payments"), body: .json(input)).ok.body.json.role
        #expect(put.name == "payments" && put.publicKeys == [Self.publicKey] && put.jwksURL == nil && put.caPEM == nil)
        #expect(put.boundClaims.additionalProperties == ["/kubernetes.io/namespace": ["payments"], "repository": ["example/a", "example/b*"]])
        #expect(put.algorithms == [.rs256] && put.tokenTTL == 300 && put.tokenMaxTTL == 3600 && put.maxLiveTokens == 10_000)
        let got = try await admin.getLoginRole(path: .init(role: "payments")).ok.body.json.role
        #expect(got.updatedAt == put.updatedAt && got.boundSubject == nil)
        #expect(try await admin.listLoginRoles().ok.body.json.roles.map(\.name) == ["payments"])

        var unbound = input
        unbound.boundClaims = .init(additionalProperties: ["sub": .case1("*")])
        let refusedRole = try await admin.putLoginRole(path: .init(role: "unbound"), body: .json(unbound))
        expectError(try refusedRole.badRequest.body.json, "errSecParam", -50)
        let client = try await server.newClient(named: "reader", accessGroups: ["reader"])
        expectError(try await client.listLoginRoles().forbidden.body.json, "errSecMissingEntitlement", -34018)

        let anonymous = server.client(token: nil)
        let malformed = try await anonymous.jwtLogin(body: .json(.init(role: "payments", jwt: "not-a-jwt"))).unauthorized
        #expect(malformed.headers.wwwAuthenticate == .bearer)
        let refused = try malformed.body.json
        expectError(refused, "errSecAuthFailed", -25293)
        #expect(refused.value1.detail == "malformed token" && refused.value1.errors.count == 1)
        let unknown = try await anonymous.kubernetesLogin(body: .json(.init(role: "nobody", jwt: "a.b.c"))).unauthorized
        #expect(try unknown.body.json.value1.detail == "unknown role")

        #expect(try await admin.deleteLoginRole(path: .init(role: "payments")).ok.body.json.deleted == 1)
        let gone = try await admin.getLoginRole(path: .init(role: "payments"))
        expectError(try gone.notFound.body.json.answer, "errSecItemNotFound", -25300)
    }
}
