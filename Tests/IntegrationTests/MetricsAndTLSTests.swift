import Foundation
import KeychaindTesting
import Testing

/// HTTPS through libmicrohttpd checked with curl, and the start-up refusal of a TLS key others can
/// read. (What `/metrics` answers is KeychaindAppTests' `MetricsTests`, on the real app in process.)
@Suite(.serialized)
struct MetricsAndTLSTests {
    /// A self-signed certificate for 127.0.0.1 and its key (0600) in a new directory; the key is
    /// P-256 unless `newKey` names another (openssl's `-newkey` and its options).
    static func selfSignedCertificate(
        newKey: [String] = ["ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
    ) throws -> (cert: String, key: String) {
        let directory = KeychaindProcess.temporaryDirectory()
        let cert = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let result = try Command.run(
            ["openssl", "req", "-x509", "-newkey"] + newKey + [
                "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                "-keyout", key, "-out", cert,
            ])
        guard result.status == 0 else { throw ProcessFailure(description: "openssl failed: \(result.stderr)") }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        return (cert, key)
    }

    @Test func servesHTTPSWithTheConfiguredCertificateAndNotPlainHTTP() throws {
        let (cert, key) = try Self.selfSignedCertificate()
        let server = try KeychaindProcess(environment: ["KEYCHAIND_TLS_CERT_FILE": cert, "KEYCHAIND_TLS_KEY_FILE": key])
        defer { server.stop() }
        #expect(server.log.contains("listening on https://127.0.0.1:\(server.port)"))

        let health = try Command.run([
            "curl", "-sS", "--max-time", "10", "--cacert", cert, "-w", "\n%{http_code}",
            "https://127.0.0.1:\(server.port)/v1/health",
        ])
        #expect(health.status == 0, "\(health.stderr)")
        #expect(health.stdout.hasSuffix("\n200"))
        #expect(health.stdout.contains("\"status\":\"ok\""))

        // An admin route works over TLS too.
        let metrics = try Command.run([
            "curl", "-sS", "--max-time", "10", "--cacert", cert, "-H", "Authorization: Bearer \(try server.adminToken())",
            "https://127.0.0.1:\(server.port)/metrics",
        ])
        #expect(metrics.stdout.contains("keychaind_http_requests_total{route=\"/health\""))

        // Without the CA the certificate is not trusted; plain HTTP gets no HTTP answer.
        let untrusted = try Command.run(["curl", "-sS", "--max-time", "10", "https://127.0.0.1:\(server.port)/v1/health"])
        #expect(untrusted.status == 60, "curl: peer certificate cannot be authenticated")
        let plain = try Command.run([
            "curl", "-sS", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}",
            "http://127.0.0.1:\(server.port)/v1/health",
        ])
        #expect(plain.status != 0)
        #expect(plain.stdout != "200")
        #expect(server.stop() == 0)
    }

    @Test func refusesATLSKeyReadableByOthers() throws {
        let (cert, key) = try Self.selfSignedCertificate()
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: key)
        let server = try KeychaindProcess(
            environment: ["KEYCHAIND_TLS_CERT_FILE": cert, "KEYCHAIND_TLS_KEY_FILE": key], waitForListening: false)
        let status = server.waitForExit()
        #expect(status != nil && status != 0)
        #expect(server.log.contains("tls.keyFile"))
        #expect(server.log.contains("readable by others"))

        // Group-readable (Debian's ssl-cert convention) is accepted.
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: key)
        let accepted = try KeychaindProcess(environment: ["KEYCHAIND_TLS_CERT_FILE": cert, "KEYCHAIND_TLS_KEY_FILE": key])
        #expect(accepted.stop() == 0)
    }
}
