import Foundation
import KeychaindTesting
import Testing

/// What `/v1/metrics` answers on the real app, read by the Prometheus project's own text parser
/// (python3 + prometheus-client, installed by scripts/bootstrap).
struct MetricsTests {
    /// Parses exposition text with `prometheus_client.parser.text_string_to_metric_families` and
    /// answers `{family: {"type": t, "samples": [[name, labels, value], ...]}}`.
    static func parse(_ text: String) throws -> [String: (type: String, samples: [(name: String, labels: [String: String], value: Double)])] {
        let script = """
            import json, math, sys
            from prometheus_client.parser import text_string_to_metric_families
            out = {}
            for family in text_string_to_metric_families(sys.stdin.read()):
                out[family.name] = {"type": family.type, "samples": [
                    [s.name, s.labels, None if math.isnan(s.value) else s.value] for s in family.samples]}
            print(json.dumps(out))
            """
        let result = try Command.run(["python3", "-c", script], stdin: Data(text.utf8))
        guard result.status == 0 else {
            Issue.record("the Prometheus parser refused /metrics (is prometheus-client installed? scripts/bootstrap installs it):\n\(result.stderr)")
            return [:]
        }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: [String: Any]])
        return object.mapValues { family in
            let samples = (family["samples"] as? [[Any]] ?? []).map { sample in
                (name: sample[0] as? String ?? "", labels: sample[1] as? [String: String] ?? [:],
                 value: (sample[2] as? NSNumber)?.doubleValue ?? .nan)
            }
            return (type: family["type"] as? String ?? "", samples: samples)
        }
    }

    @Test func metricsParseAsPrometheusTextAndCountersMove() throws {
        let server = try TestApp()
        defer { server.stop() }
        let admin = server.adminToken
        let http = server.http
        #expect(try http.json("POST", "/v1/items/genericPassword", ["service": "m1"], token: admin).status == 201)
        #expect(try http.json("POST", "/v1/items/internetPassword", ["server": "example.org"], token: admin).status == 201)
        #expect(try http.send("GET", "/v1/health").status == 200)

        let first = try http.send("GET", "/v1/metrics", token: admin)
        #expect(first.status == 200)
        #expect(first.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        #expect(first.headers["cache-control"] == "no-store", "what the vault holds and who calls it: no cache keeps it")
        let before = try Self.parse(first.text)
        #expect(before["keychaind_auth_throttled"]?.type == "counter")
        #expect(before["keychaind_auth_throttled"]?.samples.first?.value == 0)

        #expect(before["keychaind_http_requests"]?.type == "counter")
        #expect(before["keychaind_http_request_duration_seconds"]?.type == "histogram")
        #expect(before["keychaind_items"]?.type == "gauge")
        let items = before["keychaind_items"]?.samples ?? []
        #expect(items.first { $0.labels["class"] == "genericPassword" }?.value == 1)
        #expect(items.first { $0.labels["class"] == "internetPassword" }?.value == 1)
        #expect(items.first { $0.labels["class"] == "key" }?.value == 0)
        #expect(before["keychaind_locked"]?.samples.first?.value == 0)
        #expect(before["keychaind_keyring_term"]?.samples.first?.value == 1)
        #expect(before["keychaind_keyring_term_encryptions"]?.samples.first?.value == 2)
        #expect(before["keychaind_audit_write_failures"]?.samples.first?.value == 0)

        func healthCount(_ families: [String: (type: String, samples: [(name: String, labels: [String: String], value: Double)])]) -> Double {
            families["keychaind_http_requests"]?.samples.first {
                $0.name == "keychaind_http_requests_total" && $0.labels == ["route": "/health", "method": "GET", "status": "200"]
            }?.value ?? -1
        }
        func latencyCount(_ families: [String: (type: String, samples: [(name: String, labels: [String: String], value: Double)])]) -> Double {
            families["keychaind_http_request_duration_seconds"]?.samples.first {
                $0.name == "keychaind_http_request_duration_seconds_count" && $0.labels["route"] == "/health"
            }?.value ?? -1
        }
        #expect(healthCount(before) == 1)
        let posts = before["keychaind_http_requests"]?.samples.first {
            $0.labels == ["route": "/items/{class}", "method": "POST", "status": "201"]
        }
        #expect(posts?.value == 2)

        for _ in 0..<5 { _ = try http.send("GET", "/health") }
        #expect(try http.send("GET", "/v1/metrics").status == 401)
        let after = try Self.parse(try http.send("GET", "/metrics", token: admin).text)
        #expect(healthCount(after) == 6)
        #expect(latencyCount(after) == 6)
        let buckets = after["keychaind_http_request_duration_seconds"]?.samples.filter {
            $0.name.hasSuffix("_bucket") && $0.labels["route"] == "/health"
        } ?? []
        #expect(buckets.last?.labels["le"] == "+Inf" && buckets.last?.value == 6)
        #expect(zip(buckets, buckets.dropFirst()).allSatisfy { $0.value <= $1.value }, "cumulative buckets")
        let unauthorized = after["keychaind_http_requests"]?.samples.first {
            $0.labels == ["route": "/metrics", "method": "GET", "status": "401"]
        }
        #expect(unauthorized?.value == 1)
        #expect(after["keychaind_reencryption_secrets"] == nil, "no re-encryption has run")

        // A rotate with background re-encryption shows its progress, then its end.
        #expect(try http.send("POST", "/v1/admin/rotate?reencrypt=true", token: admin).status == 200)
        var progress: [String: (type: String, samples: [(name: String, labels: [String: String], value: Double)])] = [:]
        #expect(try waitUntil {
            progress = try Self.parse(try http.send("GET", "/v1/metrics", token: admin).text)
            return progress["keychaind_reencryption_running"]?.samples.first?.value == 0
        })
        let secrets = progress["keychaind_reencryption_secrets"]?.samples ?? []
        #expect(secrets.first { $0.labels["kind"] == "total" }?.value == 2)
        #expect(secrets.first { $0.labels["kind"] == "done" }?.value == 2)
        #expect(progress["keychaind_reencryption_running"]?.samples.first?.labels["term"] == "2")
        #expect(progress["keychaind_keyring_term"]?.samples.first?.value == 2)
    }

    @Test func metricsAreForAdminsOnly() throws {
        let server = try TestApp()
        defer { server.stop() }
        let http = server.http
        let created = try http.json(
            "POST", "/v1/admin/clients", ["name": "plain", "accessGroups": ["g"]], token: server.adminToken)
        let token = try #require(created.json["token"] as? String)
        let response = try http.send("GET", "/metrics", token: token)
        #expect(response.status == 403)
        #expect(response.json["error"] as? String == "errSecMissingEntitlement")
    }
}
