import Foundation
import Testing

@testable import KeychainConfig

/// Issue 29's transport settings: the TLS priorities and the refusal of plain HTTP beyond loopback.
struct TLSConfigurationTests {
    @Test func defaults() {
        let defaults = ServerConfiguration()
        #expect(defaults.tlsPriorities == ServerConfiguration.defaultTLSPriorities)
        #expect(defaults.tlsPriorities.contains("-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"))
        #expect(!defaults.tlsAllowPlaintext)
    }

    @Test func fromFileAndEnvironment() throws {
        let file = """
            [tls]
            priorities = "NORMAL:-VERS-ALL:+VERS-TLS1.3"
            allowPlaintext = true
            """
        let fromFile = try ConfigurationLoader.load(fileText: file, environment: [:], flags: [:])
        #expect(fromFile.tlsPriorities == "NORMAL:-VERS-ALL:+VERS-TLS1.3" && fromFile.tlsAllowPlaintext)
        let environment = ["KEYCHAIND_TLS_PRIORITIES": "SECURE256", "KEYCHAIND_TLS_ALLOW_PLAINTEXT": "false"]
        let fromEnvironment = try ConfigurationLoader.load(fileText: file, environment: environment, flags: [:])
        #expect(fromEnvironment.tlsPriorities == "SECURE256" && !fromEnvironment.tlsAllowPlaintext)
    }

    @Test(arguments: [
        ("[tls]\npriorities = \"\"", "tls.priorities"),
        ("[tls]\nallowPlaintext = 1", "tls.allowPlaintext"),
    ])
    func badValuesNameTheKey(text: String, key: String) {
        let error = #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(fileText: text, filePath: "test.toml", environment: [:], flags: [:])
        }
        #expect(error?.description.contains(key) == true, "\(error?.description ?? "")")
    }

    @Test(arguments: [
        ("127.0.0.1", true), ("127.8.9.10", true), ("::1", true), ("::ffff:127.0.0.1", true),
        ("0.0.0.0", false), ("10.0.0.1", false), ("::", false), ("::ffff:10.0.0.1", false), ("fe80::1", false),
        ("128.0.0.1", false),
    ])
    func loopbackAddresses(host: String, loopback: Bool) {
        #expect(ListenAddress(host: host, port: 8420).isLoopback == loopback)
    }

    @Test func plainHTTPBeyondLoopbackNeedsTLSOrConsent() throws {
        var configuration = ServerConfiguration()
        try configuration.checkTransport()
        configuration.listen = ListenAddress(host: "0.0.0.0", port: 8420)
        let error = #expect(throws: ConfigurationError.self) { try configuration.checkTransport() }
        #expect(error?.description.contains("tls.certFile") == true)
        #expect(error?.description.contains("KEYCHAIND_TLS_ALLOW_PLAINTEXT=true") == true)
        configuration.tlsAllowPlaintext = true
        try configuration.checkTransport()
        configuration.tlsAllowPlaintext = false
        configuration.tlsCertFile = "/etc/keychaind/tls.crt"
        configuration.tlsKeyFile = "/etc/keychaind/tls.key"
        try configuration.checkTransport()
    }
}
