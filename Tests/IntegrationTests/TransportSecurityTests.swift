import Foundation
import KeychaindTesting
import Testing

/// Issue 29, item 6 and the Docker weakness: HTTPS offers TLS 1.2 and 1.3 with forward-secret
/// AEAD suites only (`tls.priorities`), checked with `openssl s_client` asking for each kind of
/// handshake; and plain HTTP is not served on an address other than loopback unless allowed.
@Suite(.serialized)
struct TransportSecurityTests {
    /// A self-signed RSA certificate (RSA key transport needs one) and its key, 0600.
    static func rsaCertificate() throws -> (cert: String, key: String) {
        try MetricsAndTLSTests.selfSignedCertificate(newKey: ["rsa:2048"])
    }

    /// The protocol version `openssl s_client` negotiated with these options, or nil when the
    /// server refused the handshake. `@SECLEVEL=0` lets this OpenSSL offer what its defaults no
    /// longer do (TLS 1.1, RSA key transport, CBC), so that the server is what refuses.
    static func handshake(_ port: UInt16, _ options: [String]) throws -> String? {
        let result = try Command.run(["openssl", "s_client", "-connect", "127.0.0.1:\(port)", "-brief"] + options)
        guard result.status == 0 else { return nil }
        let line = (result.stdout + result.stderr).split(separator: "\n").first { $0.hasPrefix("Protocol version:") }
        return line.map { $0.split(separator: " ").last.map(String.init) ?? "" } ?? "?"
    }

    @Test func onlyTLS12And13WithForwardSecretAEADSuitesAreNegotiated() throws {
        let (cert, key) = try Self.rsaCertificate()
        let server = try KeychaindProcess(environment: ["KEYCHAIND_TLS_CERT_FILE": cert, "KEYCHAIND_TLS_KEY_FILE": key])
        defer { server.stop() }
        let refused: [(String, [String])] = [
            ("TLS 1.0", ["-tls1", "-cipher", "DEFAULT@SECLEVEL=0"]),
            ("TLS 1.1", ["-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"]),
            ("TLS 1.2, RSA key transport, CBC", ["-tls1_2", "-cipher", "AES128-SHA@SECLEVEL=0"]),
            ("TLS 1.2, RSA key transport, GCM", ["-tls1_2", "-cipher", "AES128-GCM-SHA256@SECLEVEL=0"]),
            ("TLS 1.2, ECDHE, CBC", ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA@SECLEVEL=0"]),
            ("TLS 1.2, ECDHE, CBC-SHA384", ["-tls1_2", "-cipher", "ECDHE-RSA-AES256-SHA384@SECLEVEL=0"]),
        ]
        for (label, options) in refused {
            let negotiated = try Self.handshake(server.port, options)
            #expect(negotiated == nil, "\(label): negotiated \(negotiated ?? "")")
        }
        let accepted: [(String, [String], String)] = [
            ("TLS 1.2, ECDHE, AES-GCM", ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256"], "TLSv1.2"),
            ("TLS 1.2, ECDHE, ChaCha20-Poly1305", ["-tls1_2", "-cipher", "ECDHE-RSA-CHACHA20-POLY1305"], "TLSv1.2"),
            ("TLS 1.3", ["-tls1_3"], "TLSv1.3"),
        ]
        for (label, options, version) in accepted {
            #expect(try Self.handshake(server.port, options) == version, "\(label)")
        }
        Hardening.report("TLS: refused \(refused.map(\.0).joined(separator: "; ")); negotiated \(accepted.map(\.0).joined(separator: "; "))")
        // And HTTPS still answers.
        let health = try Command.run([
            "curl", "-sS", "--max-time", "10", "--cacert", cert, "-w", "\n%{http_code}", "https://127.0.0.1:\(server.port)/v1/health",
        ])
        #expect(health.stdout.hasSuffix("\n200"), "\(health.stderr)")
    }

    @Test func tlsPrioritiesAreConfigurableAndABadStringStopsTheStart() throws {
        let (cert, key) = try Self.rsaCertificate()
        let tls = ["KEYCHAIND_TLS_CERT_FILE": cert, "KEYCHAIND_TLS_KEY_FILE": key]
        let twelveOnly = try KeychaindProcess(
            environment: tls.merging(["KEYCHAIND_TLS_PRIORITIES": "NORMAL:-VERS-ALL:+VERS-TLS1.2"]) { $1 })
        defer { twelveOnly.stop() }
        #expect(try Self.handshake(twelveOnly.port, ["-tls1_3"]) == nil)
        #expect(try Self.handshake(twelveOnly.port, ["-tls1_2"]) == "TLSv1.2")

        let bad = try KeychaindProcess(
            environment: tls.merging(["KEYCHAIND_TLS_PRIORITIES": "NORMAL:+NO-SUCH-CIPHER"]) { $1 }, waitForListening: false)
        #expect(bad.waitForExit() == 1)
        #expect(bad.log.contains("tls.priorities"), "\(bad.log)")
    }

    @Test func plainHTTPOnAnAddressOtherThanLoopbackIsRefused() throws {
        // 192.0.2.1 (TEST-NET-1) is on no interface here: the refusal comes before any bind.
        let dataDir = KeychaindProcess.temporaryDirectory().appendingPathComponent("data")
        let server = try KeychaindProcess(
            dataDir: dataDir, arguments: ["serve", "--listen", "192.0.2.1:0", "--data-dir", dataDir.path],
            waitForListening: false)
        #expect(server.waitForExit() == 1)
        #expect(server.log.contains("not a loopback address and no TLS is configured"), "\(server.log)")
        #expect(server.log.contains("tls.allowPlaintext"))
        #expect(!FileManager.default.fileExists(atPath: server.dataDir.appendingPathComponent("master.key").path))
    }
}
