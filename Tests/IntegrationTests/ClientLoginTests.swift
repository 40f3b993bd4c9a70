import Foundation
import KeychaindApp
import KeychainStore
import KeychainClient
import KeychaindTesting
import Testing

/// The client library logging in by itself (`Configuration(credentials: .jwt(role:tokenFile:))`)
/// against the app served in process and a real OpenID Connect issuer (`oidc_issuer.py`, PyJWT):
/// one login for many calls, renewals and new logins on a short lease without a call failing,
/// the JWT file read afresh at each login, a revoked token replaced transparently.
@Suite struct ClientLoginTests {
    /// A server, an issuer, a role `payments` over the issuer's discovery, a JWT file the issuer
    /// minted, and a client logging in with them.
    final class Fixture {
        let issuer: OIDCIssuer
        let server: InProcessKeychaind
        let http: HTTPTestClient
        let admin: String
        let directory: URL
        let jwtFile: String

        init(role extra: [String: Any] = [:]) throws {
            issuer = try OIDCIssuer()
            server = try InProcessKeychaind()
            http = server.client()
            admin = server.adminToken()
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("client-jwt-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            jwtFile = directory.appendingPathComponent("token").path
            var role: [String: Any] = [
                "issuer": issuer.issuer, "audiences": [OIDCIssuer.audience],
                "boundSubject": "system:serviceaccount:payments:*", "accessGroups": ["payments"],
            ]
            role.merge(extra) { $1 }
            let put = try http.json("PUT", "/v1/admin/auth/jwt/roles/payments", role, token: admin)
            #expect(put.status == 200, "\(put.text)")
            try writeJWT()
        }

        deinit {
            server.stop()
            issuer.stop()
            try? FileManager.default.removeItem(at: directory)
        }

        /// Mints a JWT for `subject` and writes it to the file, with a trailing newline as
        /// Kubernetes' projected token files have none but hand-made ones do.
        func writeJWT(subject: String = OIDCIssuer.subject) throws {
            let jwt = try issuer.mint(claims: ["sub": subject])
            try Data((jwt + "\n").utf8).write(to: URL(fileURLWithPath: jwtFile), options: .atomic)
        }

        func client() throws -> KeychainClient {
            try KeychainClient(
                configuration: .init(
                    baseURL: URL(string: "http://127.0.0.1:\(server.port)")!,
                    credentials: .jwt(role: "payments", tokenFile: jwtFile), timeout: 10))
        }

        /// The role's live tokens as `GET /v1/admin/tokens?role=payments` lists them.
        func roleTokens() throws -> [[String: Any]] {
            let listed = try http.send("GET", "/v1/admin/tokens?role=payments", token: admin)
            #expect(listed.status == 200, "\(listed.text)")
            return listed.json["tokens"] as? [[String: Any]] ?? []
        }
    }

    @Test func aClientWithJWTCredentialsLogsInOnceForManyCalls() async throws {
        let fixture = try Fixture()
        let client = try fixture.client()
        #expect(client.loginSession?.logins == 0)
        try await client.saveTokens(service: "api.example.com", accessToken: "eyJ-upstream", refreshToken: nil, expiresIn: 3600)
        for _ in 0..<5 {
            let header = try await client.getAuthorizationHeader(service: "api.example.com")
            #expect(header == ["Authorization": "Bearer eyJ-upstream"])
        }
        // Concurrent first calls of a second client share one login.
        let second = try fixture.client()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let header = try await second.getAuthorizationHeader(service: "api.example.com")
                    #expect(header != nil)
                }
            }
            try await group.waitForAll()
        }
        let status = try #require(client.loginSession)
        #expect(status.logins == 1 && status.renewals == 0 && status.refusedRequests == 0)
        // The lease is the role's 600 s, less however long this loaded test took since the login.
        #expect(status.accessor?.hasPrefix("kca_") == true && (1...600).contains(status.secondsLeft ?? 0))
        #expect(second.loginSession?.logins == 1)
        let tokens = try fixture.roleTokens()
        #expect(tokens.count == 2)
        #expect(tokens.contains { $0["accessor"] as? String == status.accessor && $0["subject"] as? String == OIDCIssuer.subject })
    }

    /// `tokenTTL` 15 s, `tokenMaxTTL` 30 s (a margin for a loaded machine, where the suite's other
    /// tests share this process with the server): calls every half second until the client has
    /// renewed and logged in again (at most 90 s): the client
    /// renews ahead of expiry, logs in again at the cap (reading the file the test rewrote
    /// meanwhile), and no call fails or is answered 401.
    @Test func aShortLeaseIsRenewedThenReplacedByANewLoginWithoutACallFailing() async throws {
        let fixture = try Fixture(role: ["tokenTTL": 15, "tokenMaxTTL": 30])
        // The server fetches the issuer's keys at the first login; on a loaded machine that can
        // take longer than a 2-second lease, which then expires on its way back (the client
        // recovers by a 401 and a new login, but this test counts 401s). Fetched here first.
        let warmUp = try fixture.http.json(
            "POST", "/v1/auth/jwt/login", ["role": "payments", "jwt": try fixture.issuer.mint()])
        #expect(warmUp.status == 200, "\(warmUp.text)")
        let client = try fixture.client()
        try await client.saveTokens(service: "api.example.com", accessToken: "eyJ-upstream", refreshToken: nil, expiresIn: 3600)
        let refusedBefore = client.loginSession?.refusedRequests ?? 0
        let rotated = "system:serviceaccount:payments:rotated"
        var failures: [String] = []
        let start = ContinuousClock.now
        var calls = 0
        var timeline: [String] = []
        /// Logins made before the JWT file was rotated (nil until it is): a later one must read it.
        var loginsBeforeRotation: Int?
        func done() -> Bool {
            guard ContinuousClock.now - start >= .seconds(8), let before = loginsBeforeRotation else { return false }
            guard let session = client.loginSession else { return false }
            return session.renewals >= 1 && session.logins > before
        }
        while !done(), ContinuousClock.now - start < .seconds(90) {
            do {
                let header = try await client.getAuthorizationHeader(service: "api.example.com")
                if header != ["Authorization": "Bearer eyJ-upstream"] { failures.append("call \(calls): \(String(describing: header))") }
            } catch {
                failures.append("call \(calls): \(error)")
            }
            calls += 1
            if let session = client.loginSession {
                timeline.append(
                    "\(ContinuousClock.now - start) L\(session.logins) R\(session.renewals) 401:\(session.refusedRequests) "
                        + "left \(session.secondsLeft ?? -1)")
            }
            // The platform rotates the workload's token: the next login must read the new one.
            if calls == 2 {
                loginsBeforeRotation = client.loginSession?.logins ?? 0
                try fixture.writeJWT(subject: rotated)
            }
            try await Task.sleep(for: .milliseconds(500))
        }
        #expect(failures.isEmpty, "\(failures)")
        let status = try #require(client.loginSession)
        #expect(status.refusedRequests == refusedBefore, "a call was answered 401: \(timeline)\n\(fixture.server.log.split(separator: "\n").filter { $0.contains("401") || $0.contains("expired") }.suffix(10))")
        #expect(status.renewals >= 1 && status.logins >= 2, "\(status)")
        // The token the client holds is the one the rotated JWT logged in with (its record read
        // from the vault: on a loaded machine it may have expired since the last call).
        let accessor = try #require(client.loginSession?.accessor)
        let holder = try fixture.server.app.app.vault.clients.holder(ofAccessor: accessor)
        #expect(holder?.token.subject == rotated, "\(String(describing: holder))")
    }

    @Test func aRevokedTokenIsReplacedByANewLoginAndTheCallSucceeds() async throws {
        let fixture = try Fixture()
        let client = try fixture.client()
        try await client.saveTokens(service: "api.example.com", accessToken: "eyJ-upstream", refreshToken: nil, expiresIn: 3600)
        let first = try #require(client.loginSession?.accessor)
        let revoke = try fixture.http.send("DELETE", "/v1/admin/tokens/\(first)", token: fixture.admin)
        #expect(revoke.status == 200, "\(revoke.text)")
        #expect(try await client.getAuthorizationHeader(service: "api.example.com") == ["Authorization": "Bearer eyJ-upstream"])
        let status = try #require(client.loginSession)
        #expect(status.logins == 2 && status.refusedRequests == 1 && status.accessor != first)
        #expect(try fixture.roleTokens().map { $0["accessor"] as? String } == [status.accessor])
    }

    @Test func aRefusedLoginOrAMissingFileSaysWhyWithoutTheJWT() async throws {
        let fixture = try Fixture()
        let client = try fixture.client()
        // A subject the role does not bind: the server's check, the role and the file named.
        try fixture.writeJWT(subject: "system:serviceaccount:billing:api")
        let jwt = try String(contentsOfFile: fixture.jwtFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        do {
            _ = try await client.getAuthorizationHeader(service: "api.example.com")
            Issue.record("a refused login answered")
        } catch let error as KeychainError {
            #expect(error.code == .authFailed, "\(error)")
            #expect(error.detail?.contains("role \"payments\"") == true && error.detail?.contains(fixture.jwtFile) == true)
            #expect(error.detail?.contains(jwt) == false && !"\(error)".contains(jwt))
        }
        try FileManager.default.removeItem(atPath: fixture.jwtFile)
        do {
            _ = try await client.getAuthorizationHeader(service: "api.example.com")
            Issue.record("a login without its file answered")
        } catch let error as KeychainError {
            #expect(error.code == .authFailed && error.detail == "JWT file \(fixture.jwtFile): no such file", "\(error)")
        }
        // The file back: the next call logs in.
        try fixture.writeJWT()
        #expect(try await client.getAuthorizationHeader(service: "api.example.com") == nil)
        #expect(client.loginSession?.logins == 1)
    }
}

extension SecItemClientTests {
    /// The synchronous SecItem functions through a `KeychainClient.shared` that logs in by
    /// itself (this suite is serialized and owns `shared`): an add and a read, then the token
    /// revoked by the admin and the next read logging in again.
    @Test func secItemFunctionsWithJWTCredentialsLogInAndRecoverFromARevokedToken() throws {
        let issuer = try OIDCIssuer()
        defer { issuer.stop() }
        let http = server.client()
        let admin = server.adminToken()
        let role: [String: Any] = [
            "issuer": issuer.issuer, "audiences": [OIDCIssuer.audience],
            "boundSubject": "system:serviceaccount:payments:*", "accessGroups": ["payments"],
        ]
        #expect(try http.json("PUT", "/v1/admin/auth/jwt/roles/payments", role, token: admin).status == 200)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("secitem-jwt-\(UUID().uuidString)").path
        try Data(try issuer.mint().utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let client = try KeychainClient(
            configuration: .init(
                baseURL: URL(string: "http://127.0.0.1:\(server.port)")!,
                credentials: .jwt(role: "payments", tokenFile: file), timeout: 10))
        let previous = KeychainClient.shared
        KeychainClient.shared = client
        defer { KeychainClient.shared = previous }

        let add: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "jwt-db",
            kSecAttrAccount as String: "app", kSecValueData as String: Data("s3cret".utf8),
        ]
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess, "\(String(describing: KeychainClient.lastSecItemError))")
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "jwt-db",
            kSecAttrAccount as String: "app", kSecReturnData as String: kCFBooleanTrue!,
        ]
        var result: CFTypeRef?
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
        #expect(result as? Data == Data("s3cret".utf8))
        let first = try #require(client.loginSession?.accessor)
        #expect(client.loginSession?.logins == 1)

        #expect(try http.send("DELETE", "/v1/admin/tokens/\(first)", token: admin).status == 200)
        result = nil
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
        #expect(result as? Data == Data("s3cret".utf8))
        #expect(client.loginSession?.logins == 2 && client.loginSession?.refusedRequests == 1)
        #expect(SecItemDelete(query.filter { $0.key != kSecReturnData as String } as CFDictionary) == errSecSuccess)
    }
}
