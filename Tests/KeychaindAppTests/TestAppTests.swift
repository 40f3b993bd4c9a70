import Foundation
import KeychainAPI
import KeychainConfig
import KeychaindTesting
import KeychainHTTP
import Testing

/// The harness itself: the same app in process and on a loopback port, and nothing left behind.
struct TestAppTests {
    @Test(arguments: [TestApp.Transport.inProcess, .live])
    func servesTheRealApp(_ transport: TestApp.Transport) throws {
        let app = try TestApp(transport)
        defer { app.stop() }
        #expect((transport == .live) == (app.port != nil))
        let health = try app.send(.get, "/v1/health")
        #expect(health.status == 200 && health.json["status"] == .string("ok") && health.json["locked"] == .bool(false))
        #expect(try app.send(.get, "/v1/items/genericPassword").status == 401)
        let added = try app.send(
            .post, "/v1/items/genericPassword", token: app.adminToken, body: #"{"service":"s p","account":"a","value":"v"}"#)
        #expect(added.status == 201 && added.header("cache-control") == "no-store")
        let read = try app.send(.get, "/v1/items/genericPassword?service=s+p&account=a&return=data", token: app.adminToken)
        #expect(read.json["item"]?["value"] == .string("v"))
        let metrics = try app.send(.get, "/v1/metrics", token: app.adminToken)
        #expect(metrics.status == 200 && metrics.text.contains("keychaind_items{"))
    }

    @Test func stopRemovesItsDirectoryAndTheAuditLogWasWritten() throws {
        let app = try TestApp()
        let root = app.root
        #expect(try app.send(.get, "/v1/admin/clients", token: app.adminToken).status == 200)
        // The audit file is written by its batcher's thread, a moment after the answer.
        let deadline = Date().addingTimeInterval(5)
        var audit = ""
        while !audit.contains("\"route\":\"/admin/clients\""), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
            audit = (try? String(contentsOfFile: app.configuration.auditFilePath, encoding: .utf8)) ?? ""
        }
        #expect(audit.contains("\"route\":\"/admin/clients\""))
        app.stop()
        app.stop()
        #expect(!FileManager.default.fileExists(atPath: root.path))
    }

    @Test func theConfigurationIsServed() throws {
        let app = try TestApp { $0.authFailuresPerMinute = 2 }
        defer { app.stop() }
        let statuses = try (0..<4).map { _ in try app.send(.get, "/v1/admin/clients", token: "kc_forged").status }
        #expect(statuses == [401, 401, 429, 429])
    }
}
