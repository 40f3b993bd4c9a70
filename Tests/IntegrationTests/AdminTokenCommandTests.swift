import Foundation
import KeychaindTesting
import Testing

/// `keychaind admin-token`: with every admin token gone, the operator holding master.key mints a
/// recovery admin token with the server stopped; it works, is audited by accessor, and the
/// command refuses while a server holds the data directory.
@Suite struct AdminTokenCommandTests {
    @Test func aRecoveryAdminTokenIsMintedWithTheServerStoppedAndAudited() throws {
        let server = try KeychaindProcess()
        let firstToken = try server.adminToken()
        let running = try VaultOperationsTests.runCommand(["admin-token", "--data-dir", server.dataDir.path])
        #expect(running.status != 0, "\(running.log)")
        #expect(try server.adminToken() == firstToken)
        #expect(server.stop() == 0)

        let minted = try VaultOperationsTests.runCommand(["admin-token", "--data-dir", server.dataDir.path])
        #expect(minted.status == 0, "\(minted.log)")
        #expect(minted.log.contains("recovery admin token written"))
        let recovery = try server.adminToken()
        #expect(recovery != firstToken && recovery.hasPrefix("kc_"))
        #expect(!minted.log.contains(recovery))

        let restarted = try KeychaindProcess(dataDir: server.dataDir)
        defer { restarted.stop() }
        let me = try restarted.client().send("GET", "/v1/auth/token/self", token: recovery)
        #expect(me.status == 200 && me.json["role"] as? String == "admin", "\(me.text)")
        let name = try #require(me.json["name"] as? String)
        #expect(name.hasPrefix("recovery-"))
        let accessor = try #require(me.json["accessor"] as? String)
        // The first admin's token still works too: nothing was revoked.
        #expect(try restarted.client().send("GET", "/v1/auth/token/self", token: firstToken).status == 200)
        let audit = try String(contentsOf: server.dataDir.appendingPathComponent("audit.log"), encoding: .utf8)
        let line = try #require(audit.split(separator: "\n").first { $0.contains(#""phase":"command""#) })
        #expect(line.contains(#""client":"\#(name)""#) && line.contains(#""accessor":"\#(accessor)""#))
        #expect(!audit.contains(recovery))

        let empty = KeychaindProcess.temporaryDirectory().appendingPathComponent("empty")
        let refused = try VaultOperationsTests.runCommand(["admin-token", "--data-dir", empty.path])
        #expect(refused.status != 0 && refused.log.contains("holds no vault"), "\(refused.log)")
    }
}

/// A restore drops every token a login issued (a revoked one would come back with the backup;
/// workloads log in again) and keeps the roles and the clients' tokens.
@Suite struct RestoreDropsLoginTokensTests {
    @Test func loginTokensDoNotComeBackWithABackup() throws {
        let issuer = try OIDCIssuer()
        defer { issuer.stop() }
        let server = try KeychaindProcess()
        let http = server.client()
        let admin = try server.adminToken()
        let role: [String: Any] = [
            "issuer": issuer.issuer, "publicKeys": [try issuer.publicPEM()], "audiences": [OIDCIssuer.audience],
            "boundSubject": OIDCIssuer.subject, "accessGroups": ["payments"],
        ]
        #expect(try http.json("PUT", "/v1/admin/auth/jwt/roles/payments", role, token: admin).status == 200)
        let login = try http.json("POST", "/v1/auth/jwt/login", ["role": "payments", "jwt": try issuer.mint()])
        let token = try #require(login.json["token"] as? String, "\(login.text)")
        let backup = try http.send("GET", "/v1/admin/backup", token: admin)
        #expect(backup.status == 200)
        #expect(server.stop() == 0)
        let file = KeychaindProcess.temporaryDirectory().appendingPathComponent("keychaind.backup")
        try backup.body.write(to: file)
        let restore = try VaultOperationsTests.runCommand(["restore", "--from", file.path, "--data-dir", server.dataDir.path, "--force"])
        #expect(restore.status == 0, "\(restore.log)")

        let restored = try KeychaindProcess(dataDir: server.dataDir)
        defer { restored.stop() }
        #expect(try restored.client().send("GET", "/v1/auth/token/self", token: token).status == 401)
        #expect(try restored.client().send("GET", "/v1/auth/token/self", token: admin).status == 200)
        let again = try restored.client().json("POST", "/v1/auth/jwt/login", ["role": "payments", "jwt": try issuer.mint()])
        #expect(again.status == 200, "\(again.text)")
    }
}
