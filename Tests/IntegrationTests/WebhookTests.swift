import Foundation
import KeychainAPI
import KeychainRefresh
import KeychainStore
import KeychainTestSupport
import KeychaindTesting
import Testing

/// Webhooks end to end (docs/api.md, "Webhooks"): the real binary refreshing against Authlib's
/// token endpoint (`OAuthServer`), made to fail and recover through its control route, and a
/// receiver on loopback (`WebhookReceiver`) that verifies every signature with the Standard
/// Webhooks library, independently of keychaind. Events fire on transitions only; a delivery the
/// receiver refuses is retried with the same `webhook-id`; two PostgreSQL nodes deliver each
/// event once.
@Suite(.serialized)
final class WebhookTests {
    /// Refresh exchanges only when asked (no background rounds), so each transition is the test's.
    static let environment = ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"]

    /// Stores a webhook for `events` aimed at `receiver` on `keychaind` and hands its secret (made
    /// by keychaind, answered once) to the receiver.
    func subscribe(_ receiver: WebhookReceiver, _ events: [String], on keychaind: any LoopbackKeychaind, fail: Int = 0)
        throws -> String
    {
        let put = try keychaind.client().json(
            "PUT", "/v1/admin/webhooks/ops", ["url": receiver.url, "events": events], token: try keychaind.adminToken())
        #expect(put.status == 200, "\(put.text)")
        let secret = try #require((put.json["webhook"] as? [String: Any])?["secret"] as? String)
        #expect(secret.hasPrefix("whsec_"))
        let read = try keychaind.client().send("GET", "/v1/admin/webhooks/ops", token: try keychaind.adminToken())
        #expect(read.status == 200 && !read.text.contains(secret), "a read never answers the secret")
        try receiver.control(secret: secret, fail: fail)
        return secret
    }

    /// `admin`: the cluster's first admin token (only the first node's data directory holds it).
    func refreshNow(_ service: String, on keychaind: any LoopbackKeychaind, admin: String? = nil) throws -> String? {
        let answer = try keychaind.client().send("POST", "/v1/tokens/\(service)/refresh", token: try admin ?? keychaind.adminToken())
        #expect(answer.status == 200, "\(answer.text)")
        return answer.json["state"] as? String
    }

    /// The value of one sample of `/metrics` (0 when absent).
    func metric(_ sample: String, on keychaind: any LoopbackKeychaind, admin: String? = nil) throws -> Int {
        let text = try keychaind.client().send("GET", "/metrics", token: try admin ?? keychaind.adminToken()).text
        let line = text.split(separator: "\n").first { $0.hasPrefix(sample + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) } ?? 0
    }

    @Test func transitionsAreDeliveredSignedOnceEachAndARefusedDeliveryIsRetriedWithItsID() throws {
        let provider = try OAuthServer()
        defer { provider.stop() }
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let keychaind = try KeychaindProcess(dataDir: KeychaindProcess.temporaryDirectory(), environment: Self.environment)
        defer { _ = keychaind.stop() }
        // The first delivery is refused (503): it comes again, with the same id.
        let secret = try subscribe(receiver, ["refreshFailed", "recovered", "needsReauth"], on: keychaind, fail: 1)
        let seeded = try provider.register("api.example.com", on: keychaind)

        try provider.control(mode: "error")
        #expect(try refreshNow("api.example.com", on: keychaind) == "failing")
        #expect(try refreshNow("api.example.com", on: keychaind) == "failing", "a second failure is a retry, not a transition")
        var deliveries = try receiver.wait(timeout: 20) { $0.contains { $0.status == 204 } }
        #expect(deliveries.map(\.status) == [503, 204], "\(deliveries.map(\.status))")
        #expect(Set(deliveries.map(\.id)).count == 1, "a retry carries the same webhook-id")
        #expect(deliveries.allSatisfy { $0.verified }, "\(deliveries.compactMap(\.error))")
        #expect(deliveries.allSatisfy { $0.contentType == "application/json" })
        let failed = try #require(deliveries.last?.body)
        #expect(failed["type"] as? String == "refreshFailed")
        #expect(failed["service"] as? String == "api.example.com")
        #expect(failed["accessGroup"] is String)
        #expect(failed["user"] is NSNull && failed["connectId"] is NSNull)
        #expect(failed["refreshState"] as? String == "failing")
        #expect((failed["error"] as? String)?.isEmpty == false)
        #expect(failed["at"] is String)
        #expect(Set(failed.keys) == ["type", "accessGroup", "service", "user", "connectId", "refreshState", "error", "at"])

        try provider.control(mode: "normal")
        #expect(try refreshNow("api.example.com", on: keychaind) == "ok")
        try provider.control(mode: "invalid_grant")
        #expect(try refreshNow("api.example.com", on: keychaind) == "needsReauth")
        #expect(try refreshNow("api.example.com", on: keychaind) == "needsReauth", "needsReauth fires once")
        deliveries = try receiver.wait(timeout: 10) { $0.count >= 4 }
        // Nothing more comes: the second needsReauth fired nothing.
        usleep(2_500_000)
        deliveries = try receiver.received()
        #expect(deliveries.map(\.type) == ["refreshFailed", "refreshFailed", "recovered", "needsReauth"])
        #expect(deliveries.allSatisfy { $0.verified }, "\(deliveries.compactMap(\.error))")
        #expect(Set(deliveries.map(\.id)).count == 3)
        let recovered = deliveries[2].body
        #expect(recovered["refreshState"] as? String == "ok" && recovered["error"] is NSNull)
        #expect(deliveries[3].body["refreshState"] as? String == "needsReauth")
        #expect((deliveries[3].body["error"] as? String)?.contains("invalid_grant") == true)

        // New tokens stored over a setting in needsReauth put it back to ok: recovered.
        let fresh = try provider.seed(clientId: OAuthServer.basicClient.id)
        let put = try keychaind.client().json(
            "PUT", "/v1/tokens/api.example.com", ["accessToken": fresh.accessToken, "refreshToken": fresh.refreshToken, "expiresIn": 3600],
            token: try keychaind.adminToken())
        #expect(put.status == 200, "\(put.text)")
        deliveries = try receiver.wait(timeout: 10) { $0.count >= 5 }
        #expect(deliveries.count == 5 && deliveries.last?.type == "recovered" && deliveries.last?.verified == true)
        #expect(deliveries.last?.body["refreshState"] as? String == "ok")

        // Never a token in a body, never the secret in the log.
        let stats = try provider.stats()
        for delivery in deliveries {
            let text = String(decoding: try JSONSerialization.data(withJSONObject: delivery.body), as: UTF8.self)
            for token in stats.issued + stats.presented + [seeded.accessToken, seeded.refreshToken, fresh.accessToken, fresh.refreshToken] {
                #expect(!text.contains(token))
            }
        }
        #expect(!keychaind.log.contains(secret) && !keychaind.log.contains(String(secret.dropFirst(6))))
        #expect(try metric(#"keychaind_webhook_deliveries_total{outcome="delivered"}"#, on: keychaind) == 4)
        #expect(try metric(#"keychaind_webhook_deliveries_total{outcome="retried"}"#, on: keychaind) == 1)
        #expect(try metric(#"keychaind_webhook_deliveries_total{outcome="given_up"}"#, on: keychaind) == 0)
    }

    @Test func aDeliveryIsGivenUpOnceItsRetriesRunOut() throws {
        let provider = try OAuthServer()
        defer { provider.stop() }
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        var environment = Self.environment
        environment["KEYCHAIND_WEBHOOKS_RETRY_SECONDS"] = "3"
        let keychaind = try KeychaindProcess(dataDir: KeychaindProcess.temporaryDirectory(), environment: environment)
        defer { _ = keychaind.stop() }
        _ = try subscribe(receiver, ["needsReauth"], on: keychaind, fail: 100)
        _ = try provider.register("api.example.com", on: keychaind)
        try provider.control(mode: "invalid_grant")
        #expect(try refreshNow("api.example.com", on: keychaind) == "needsReauth")
        #expect(waitUntil(timeout: 20) {
            (try? metric(#"keychaind_webhook_deliveries_total{outcome="given_up"}"#, on: keychaind)) == 1
        })
        let deliveries = try receiver.received()
        #expect(!deliveries.isEmpty && deliveries.allSatisfy { $0.status == 503 && $0.verified })
        #expect(Set(deliveries.map(\.id)).count == 1)
        usleep(2_000_000)
        #expect(try receiver.received().count == deliveries.count, "nothing is sent once given up")
    }

    @Test func twoPostgreSQLNodesDeliverEachEventOnceWithOneID() throws {
        let provider = try OAuthServer()
        defer { provider.stop() }
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let cluster = try PGCluster(postgres: try ThrowawayPostgres.shared(), nodes: 2, environment: Self.environment)
        defer { cluster.stopAll() }
        // The first two deliveries are refused: their retries may come from either node.
        _ = try subscribe(receiver, ["refreshFailed"], on: cluster.nodes[0], fail: 2)
        let services = (0..<6).map { "svc\($0).example.com" }
        for service in services { _ = try provider.register(service, on: cluster.nodes[0]) }
        try provider.control(mode: "error")
        for (index, service) in services.enumerated() {
            #expect(try refreshNow(service, on: cluster.nodes[index % 2], admin: cluster.adminToken) == "failing")
        }
        var deliveries = try receiver.wait(timeout: 30) { $0.filter { $0.status == 204 }.count >= 6 }
        // Both nodes keep polling: nothing is delivered twice.
        usleep(3_000_000)
        deliveries = try receiver.received()
        #expect(deliveries.allSatisfy { $0.verified }, "\(deliveries.compactMap(\.error))")
        let delivered = deliveries.filter { $0.status == 204 }
        #expect(delivered.count == 6, "\(delivered.map(\.id))")
        #expect(Set(delivered.map(\.id)).count == 6)
        #expect(Set(delivered.compactMap { $0.body["service"] as? String }) == Set(services))
        #expect(deliveries.count == 8, "two refusals retried, each once: \(deliveries.map { "\($0.id) \($0.status)" })")
        for refused in deliveries.filter({ $0.status == 503 }) {
            #expect(delivered.contains { $0.id == refused.id }, "a retry carries the refused delivery's id")
        }
        let sums = try (0..<2).map { node in
            (
                delivered: try metric(
                    #"keychaind_webhook_deliveries_total{outcome="delivered"}"#, on: cluster.nodes[node], admin: cluster.adminToken),
                retried: try metric(
                    #"keychaind_webhook_deliveries_total{outcome="retried"}"#, on: cluster.nodes[node], admin: cluster.adminToken)
            )
        }
        #expect(sums.map(\.delivered).reduce(0, +) == 6 && sums.map(\.retried).reduce(0, +) == 2, "\(sums)")

        // Forced refreshes of one setting on both nodes at once: one transition, one event.
        _ = try provider.register("race.example.com", on: cluster.nodes[0])
        let clients = [cluster.client(0), cluster.client(1)]
        let admin = cluster.adminToken
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            _ = try? clients[index % 2].send("POST", "/v1/tokens/race.example.com/refresh", token: admin)
        }
        _ = try receiver.wait(timeout: 10) { $0.contains { $0.body["service"] as? String == "race.example.com" } }
        usleep(3_000_000)
        let raced = try receiver.received().filter { $0.body["service"] as? String == "race.example.com" }
        #expect(raced.count == 1 && raced.first?.type == "refreshFailed", "\(raced.map(\.id))")
    }
}

/// The signature's spelling against the Standard Webhooks specification's own example (its
/// README and libraries' tests): key, id, timestamp and body as there.
struct WebhookSignatureVectorTests {
    @Test func theSpecificationsExampleSignsAsItSays() throws {
        let key = try WebhookSecretText.decode("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        let headers = WebhookDeliverer.signedHeaders(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: Array(#"{"test": 2432232314}"#.utf8),
            signer: HMACWebhookSigner(key: key))
        #expect(
            headers == [
                "webhook-id: msg_p5jXN8AQM9LWM0D4loKWxJek", "webhook-timestamp: 1614265330",
                "webhook-signature: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
            ])
    }
}
