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
