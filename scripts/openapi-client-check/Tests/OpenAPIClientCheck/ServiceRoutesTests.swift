import Foundation
import OpenAPIRuntime
import Testing

/// Health, metrics and the answers every route shares: 401 without a valid token, 429 past the
/// failed-authentication limit, 413 past the body limit.
@Suite struct ServiceRoutesTests {
    @Test func healthAndMetrics() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let anonymous = server.client(token: nil)
        let health = try await anonymous.health().ok.body.json
        #expect(health.status == .ok && !health.locked && !health.version.isEmpty)

        let metrics = try await server.admin.metrics().ok.body.textPlainVersion_0_0_4
        let text = try await String(collecting: metrics, upTo: 1 << 20)
        #expect(text.contains("keychaind_build_info{version=\"\(health.version)\"} 1"))
        #expect(text.contains("keychaind_http_requests_total{"))
        #expect(text.contains("keychaind_locked 0"))
        let client = try await server.newClient(named: "reader", accessGroups: ["reader"])
        expectError(try await client.metrics().forbidden.body.json, "errSecMissingEntitlement", -34018)
        let missing = try await anonymous.metrics().unauthorized
        #expect(missing.headers.wwwAuthenticate == .bearer)
        expectError(try missing.body.json, "errSecAuthFailed", -25293)
    }

    @Test func failedAuthenticationsAreLimited() async throws {
        let server = try LiveServer(settings: ["KEYCHAIND_LIMITS_AUTH_FAILURES_PER_MINUTE": "2"])
        defer { server.stop() }
        let intruder = server.client(token: "kc_" + String(repeating: "A", count: 43))
        for _ in 0..<2 {
            expectError(try await intruder.vaultStatus().unauthorized.body.json, "errSecAuthFailed", -25293)
        }
        let limited = try await intruder.vaultStatus().tooManyRequests
        #expect((limited.headers.retryAfter ?? 0) > 0)
        expectError(try limited.body.json, "errSecAuthFailed", -25293)
        // A valid token is never limited.
        #expect(try await server.admin.vaultStatus().ok.body.json.locked == false)
    }

    @Test func oversizedBodiesAreRefused() async throws {
        let server = try LiveServer(settings: ["KEYCHAIND_LIMITS_MAX_BODY_BYTES": "1024"])
        defer { server.stop() }
        let tooLarge = try await server.admin.addGenericPassword(
            body: .json(.GenericPasswordNewText(.init(account: "big", value: String(repeating: "x", count: 2048)))))
        expectError(try tooLarge.contentTooLarge.body.json, "errSecParam", -50)
    }
}
