import Foundation
import KeychainAPI
import KeychainCore
import KeychaindTesting
import KeychainHTTP
import Testing

/// The webhook routes on the app as keychaind serves it (docs/api.md, "Webhooks"): admin only;
/// a key made and answered once, never by a read; bad input refused with nothing stored.
@Suite struct WebhookRoutesTests {
    static let body = #"{"url":"https://hooks.example/in","events":["needsReauth","refreshFailed"]}"#

    @Test func aWebhookIsStoredWithAKeyAnsweredOnceAndListedReadAndRemoved() throws {
        let server = try TestServer()
        let created = server.send(.put, "/v1/admin/webhooks/ops", token: server.adminToken, body: Self.body)
        #expect(created.status == 200)
        let webhook = try #require(created.json["webhook"])
        #expect(webhook["name"] == .string("ops") && webhook["url"] == .string("https://hooks.example/in"))
        #expect(webhook["events"] == .array([.string("refreshFailed"), .string("needsReauth")]))
        let secret = try #require(webhook["secret"]?.stringValue)
        #expect(secret.hasPrefix("whsec_"))
        #expect(Base64.decode(String(secret.dropFirst(6)))?.count == WebhookSecret.generatedBytes)
        let createdAt = webhook["createdAt"]

        let read = server.send(.get, "/v1/admin/webhooks/ops", token: server.adminToken)
        #expect(read.status == 200 && read.json["webhook"]?["secret"] == nil)
        #expect(read.json["webhook"]?["events"] == webhook["events"])

        // Changed without a secret: the key stays (and is not answered), createdAt too.
        let changed = server.send(
            .put, "/v1/admin/webhooks/ops", token: server.adminToken,
            body: #"{"url":"http://127.0.0.1:9/hook","events":["recovered"]}"#)
        #expect(changed.status == 200 && changed.json["webhook"]?["secret"] == nil)
        #expect(changed.json["webhook"]?["createdAt"] == createdAt)
        #expect(changed.json["webhook"]?["url"] == .string("http://127.0.0.1:9/hook"))

        // A given secret is stored, never echoed.
        let given = "whsec_" + Base64.encode([UInt8](repeating: 7, count: 24))
        let withSecret = server.send(
            .put, "/v1/admin/webhooks/billing", token: server.adminToken,
            body: #"{"url":"https://hooks.example/b","events":["connected"],"secret":"\#(given)"}"#)
        #expect(withSecret.status == 200 && withSecret.json["webhook"]?["secret"] == nil)

        let list = server.send(.get, "/v1/admin/webhooks", token: server.adminToken)
        #expect(list.status == 200)
        guard case .array(let hooks)? = list.json["webhooks"] else { Issue.record("no list"); return }
        #expect(hooks.map { $0["name"] } == [.string("billing"), .string("ops")])
        #expect(hooks.allSatisfy { $0["secret"] == nil })

        let removed = server.send(.delete, "/v1/admin/webhooks/ops", token: server.adminToken)
        #expect(removed.status == 200 && removed.json["deleted"] == .integer(1))
        let again = server.send(.delete, "/v1/admin/webhooks/ops", token: server.adminToken)
        #expect(again.status == 404 && again.json["error"] == .string("errSecItemNotFound"))
        #expect(server.send(.get, "/v1/admin/webhooks/ops", token: server.adminToken).status == 404)
    }

    /// Delivery attempts by outcome, every outcome listed from the start.
    @Test func metricsCountDeliveryOutcomes() throws {
        let app = try TestApp()
        defer { app.stop() }
        let metrics = app.respond(.get, "/v1/metrics", token: app.adminToken)
        #expect(metrics.status == 200)
        for outcome in ["delivered", "retried", "given_up"] {
            #expect(metrics.sample(#"keychaind_webhook_deliveries_total{outcome="\#(outcome)"}"#) == 0, "\(outcome)")
        }
        #expect(metrics.text.contains("# TYPE keychaind_webhook_deliveries_total counter"))
    }

    @Test func onlyAdminsReachTheRoutes() throws {
        let server = try TestServer()
        let client = try server.client("app", groups: ["app"])
        for (method, path, body) in [
            (HTTPMethod.put, "/v1/admin/webhooks/ops", Self.body), (.get, "/v1/admin/webhooks/ops", nil),
            (.get, "/v1/admin/webhooks", nil), (.delete, "/v1/admin/webhooks/ops", nil),
        ] {
            let answer = server.send(method, path, token: client, body: body)
            #expect(answer.status == 403 && answer.json["error"] == .string("errSecMissingEntitlement"), "\(method) \(path)")
        }
        #expect(server.send(.get, "/v1/admin/webhooks", token: nil).status == 401)
        #expect(server.send(.get, "/v1/admin/webhooks", token: server.adminToken).json["webhooks"] == .array([]))
    }

    @Test(arguments: [
        ("ops", #"{"url":"http://hooks.example/in","events":["connected"]}"#, "https"),
        ("ops", #"{"url":"ftp://127.0.0.1/in","events":["connected"]}"#, "url"),
        ("ops", #"{"url":"https://user:pw@hooks.example/in","events":["connected"]}"#, "credentials"),
        ("ops", #"{"url":"https://hooks.example/in","events":[]}"#, "events"),
        ("ops", #"{"url":"https://hooks.example/in","events":["tokenIssued"]}"#, "events"),
        ("ops", #"{"url":"https://hooks.example/in"}"#, "events"),
        ("ops", #"{"events":["connected"]}"#, "url"),
        ("ops", #"{"url":"https://hooks.example/in","events":["connected"],"secret":"c2hvcnQ="}"#, "whsec_"),
        ("ops", #"{"url":"https://hooks.example/in","events":["connected"],"secret":"whsec_c2hvcnQ="}"#, "24"),
        ("ops", #"{"url":"https://hooks.example/in","events":["connected"],"secret":"whsec_not base64!"}"#, "base64"),
        ("ops", #"{"url":"https://hooks.example/in","events":["connected"],"retries":3}"#, "unknown key"),
        ("Ops", Self.body, "name"),
        ("..", Self.body, "name"),
    ])
    func badInputIsRefusedAndNothingIsStored(name: String, body: String, detail: String) throws {
        let server = try TestServer()
        let answer = server.send(.put, "/v1/admin/webhooks/\(name)", token: server.adminToken, body: body)
        #expect(answer.status == 400 && answer.json["error"] == .string("errSecParam"))
        let said = answer.json["detail"]?.stringValue ?? ""
        #expect(said.contains(detail), "\(said)")
        #expect(!said.contains("c2hvcnQ"), "the detail never repeats a secret")
        #expect(server.send(.get, "/v1/admin/webhooks", token: server.adminToken).json["webhooks"] == .array([]))
    }
}
