import Foundation
import Testing

@testable import KeychainConfig

/// The `[audit]` keys (docs/operations.md).
struct ObserveConfigurationTests {
    @Test func auditDefaults() throws {
        let configuration = try ConfigurationLoader.load(fileText: nil, environment: [:], flags: ["dataDir": "/d"])
        #expect(configuration.auditEnabled)
        #expect(!configuration.auditFailClosed)
        #expect(!configuration.auditFsync)
        #expect(configuration.auditFile == "")
        #expect(configuration.auditFilePath == "/d/audit.log")
    }

    @Test func auditKeysFromFileAndEnvironment() throws {
        let file = """
            [audit]
            enabled = false
            file = "/var/log/keychaind/audit.log"
            failClosed = true
            fsync = true
            """
        let fromFile = try ConfigurationLoader.load(fileText: file, environment: [:], flags: [:])
        #expect(!fromFile.auditEnabled)
        #expect(fromFile.auditFailClosed)
        #expect(fromFile.auditFsync)
        #expect(fromFile.auditFilePath == "/var/log/keychaind/audit.log")

        let environment = [
            "KEYCHAIND_AUDIT_ENABLED": "true", "KEYCHAIND_AUDIT_FAIL_CLOSED": "false",
            "KEYCHAIND_AUDIT_FSYNC": "false", "KEYCHAIND_AUDIT_FILE": "/elsewhere.log",
        ]
        let fromEnvironment = try ConfigurationLoader.load(fileText: file, environment: environment, flags: [:])
        #expect(fromEnvironment.auditEnabled)
        #expect(!fromEnvironment.auditFailClosed)
        #expect(!fromEnvironment.auditFsync)
        #expect(fromEnvironment.auditFilePath == "/elsewhere.log")
    }

    @Test func environmentNamesOfTheAuditKeys() {
        #expect(ConfigurationLoader.environmentName(for: "audit.enabled") == "KEYCHAIND_AUDIT_ENABLED")
        #expect(ConfigurationLoader.environmentName(for: "audit.failClosed") == "KEYCHAIND_AUDIT_FAIL_CLOSED")
        #expect(ConfigurationLoader.environmentName(for: "audit.fsync") == "KEYCHAIND_AUDIT_FSYNC")
        #expect(ConfigurationLoader.environmentName(for: "audit.file") == "KEYCHAIND_AUDIT_FILE")
    }

    @Test(arguments: [
        ("[audit]\nenabled = 1", "audit.enabled"),
        ("[audit]\nfailClosed = \"yes\"", "audit.failClosed"),
        ("[audit]\nfsync = TRUE", "audit.fsync"),
        ("[audit]\nfailclosed = true", "audit.failclosed"),
    ])
    func badAuditSettingsNameTheKey(text: String, key: String) throws {
        let error = #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(fileText: text, filePath: "test.toml", environment: [:], flags: [:])
        }
        #expect(error?.description.contains(key) == true, "\(error?.description ?? "")")
    }

    @Test func badAuditEnvironmentValueNamesTheVariable() {
        let error = #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(fileText: nil, environment: ["KEYCHAIND_AUDIT_FAIL_CLOSED": "on"], flags: [:])
        }
        #expect(error?.description.contains("KEYCHAIND_AUDIT_FAIL_CLOSED") == true)
    }
}

struct ShippedTLSConfigurationTests {
    @Test func theTLSExampleLoads() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/keychaind-tls.toml").path
        let configuration = try ConfigurationLoader.load(filePath: path, environment: [:], flags: [:])
        #expect(configuration.tlsCertFile == "./data/tls.crt")
        #expect(configuration.tlsKeyFile == "./data/tls.key")
        #expect(configuration.auditFailClosed)
    }
}
