import Foundation
import Testing

@testable import KeychainConfig

struct ConfigurationLoaderTests {
    @Test func defaultsWithoutAnyLayer() throws {
        let configuration = try ConfigurationLoader.load(fileText: nil, environment: [:], flags: [:])
        #expect(configuration == ServerConfiguration())
        #expect(configuration.listen.description == "127.0.0.1:8420")
        #expect(configuration.dataDir == "./data")
        #expect(configuration.maxBodyBytes == 1_048_576)
    }

    @Test func workerThreadsAreTwoPerCoreUnlessSet() throws {
        let defaults = try ConfigurationLoader.load(fileText: nil, environment: [:], flags: [:])
        #expect(defaults.workerThreads(processors: 2) == 4)
        #expect(defaults.workerThreads(processors: 16) == 32)
        #expect(defaults.workerThreads(processors: 0) == 2)
        let set = try ConfigurationLoader.load(fileText: "threads = 3", environment: [:], flags: [:])
        #expect(set.workerThreads(processors: 2) == 3)
    }

    @Test func theShippedConfigFileHoldsExactlyTheDefaults() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/keychaind.toml").path
        let configuration = try ConfigurationLoader.load(filePath: path, environment: [:], flags: [:])
        #expect(configuration == ServerConfiguration())
    }

    @Test func theShippedTLSExampleSetsOnlyTLSAndFailClosedAudit() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/keychaind-tls.toml").path
        let configuration = try ConfigurationLoader.load(filePath: path, environment: [:], flags: [:])
        var expected = ServerConfiguration()
        expected.tlsCertFile = "./data/tls.crt"
        expected.tlsKeyFile = "./data/tls.key"
        expected.auditFailClosed = true
        #expect(configuration == expected)
    }

    @Test func environmentOverridesFileAndFlagsOverrideBoth() throws {
        let file = """
            listen = "127.0.0.1:9000"
            dataDir = "/from/file"
            [limits]
            maxBodyBytes = 10
            """
        let fromFile = try ConfigurationLoader.load(fileText: file, environment: [:], flags: [:])
        #expect(fromFile.listen.port == 9000)
        #expect(fromFile.dataDir == "/from/file")
        #expect(fromFile.maxBodyBytes == 10)

        let environment = ["KEYCHAIND_LISTEN": "127.0.0.1:9001", "KEYCHAIND_LIMITS_MAX_BODY_BYTES": "20"]
        let fromEnvironment = try ConfigurationLoader.load(fileText: file, environment: environment, flags: [:])
        #expect(fromEnvironment.listen.port == 9001)
        #expect(fromEnvironment.dataDir == "/from/file")
        #expect(fromEnvironment.maxBodyBytes == 20)

        let fromFlags = try ConfigurationLoader.load(
            fileText: file, environment: environment, flags: ["listen": "127.0.0.1:9002", "dataDir": "/from/flag"])
        #expect(fromFlags.listen.port == 9002)
        #expect(fromFlags.dataDir == "/from/flag")
        #expect(fromFlags.maxBodyBytes == 20)
    }

    @Test(arguments: [
        ("listen = \"nowhere\"", "listen"),
        ("threads = -1", "threads"),
        ("logLevel = \"loud\"", "logLevel"),
        ("colour = \"blue\"", "colour"),
        ("[limits]\nmaxBodyByte = 3", "limits.maxBodyByte"),
        ("[limits]\nconnectionMemoryBytes = 100", "limits.connectionMemoryBytes"),
        ("[tls]\ncertFile = \"/x.pem\"", "tls.keyFile"),
        ("listen = \"127.0.0.1:1\"\nlisten = \"127.0.0.1:2\"", "listen"),
        ("[backup]\ninterval = -5", "backup.interval"),
        ("[backup]\nkeep = 0", "backup.keep"),
        ("[backup]\nevery = 3", "backup.every"),
        ("[limits]\nauthFailuresPerMinute = -1", "limits.authFailuresPerMinute"),
        ("[limits]\nauthFailureAddresses = 0", "limits.authFailureAddresses"),
    ])
    func badFileSettingsAreErrorsNamingTheKey(text: String, key: String) throws {
        let error = #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(fileText: text, filePath: "test.toml", environment: [:], flags: [:])
        }
        #expect(error?.description.contains(key) == true, "\(error?.description ?? "")")
    }

    @Test func authFailureLimitFromFileEnvironmentAndDefaults() throws {
        let defaults = ServerConfiguration()
        #expect(defaults.authFailuresPerMinute == 60 && defaults.authFailureAddresses == 10_000)
        let file = "[limits]\nauthFailuresPerMinute = 5\nauthFailureAddresses = 100"
        let fromFile = try ConfigurationLoader.load(fileText: file, environment: [:], flags: [:])
        #expect(fromFile.authFailuresPerMinute == 5 && fromFile.authFailureAddresses == 100)
        #expect(ConfigurationLoader.environmentName(for: "limits.authFailuresPerMinute")
            == "KEYCHAIND_LIMITS_AUTH_FAILURES_PER_MINUTE")
        let off = try ConfigurationLoader.load(
            fileText: file, environment: ["KEYCHAIND_LIMITS_AUTH_FAILURES_PER_MINUTE": "0"], flags: [:])
        #expect(off.authFailuresPerMinute == 0 && off.authFailureAddresses == 100)
    }

    @Test func backupSettingsFromFileEnvironmentAndDefaults() throws {
        let defaults = ServerConfiguration()
        #expect(defaults.backupInterval == 0 && defaults.backupDirectory.isEmpty && defaults.backupKeep == 7)
        #expect(defaults.effectiveBackupDirectory == "./data/backups")
        let file = """
            dataDir = "/srv/kc"
            [backup]
            interval = 3600
            keep = 24
            """
        let fromFile = try ConfigurationLoader.load(fileText: file, environment: [:], flags: [:])
        #expect(fromFile.backupInterval == 3600 && fromFile.backupKeep == 24)
        #expect(fromFile.effectiveBackupDirectory == "/srv/kc/backups")
        let environment = ["KEYCHAIND_BACKUP_DIRECTORY": "/backups/kc", "KEYCHAIND_BACKUP_INTERVAL": "60"]
        let fromEnvironment = try ConfigurationLoader.load(fileText: file, environment: environment, flags: [:])
        #expect(fromEnvironment.backupInterval == 60 && fromEnvironment.backupKeep == 24)
        #expect(fromEnvironment.effectiveBackupDirectory == "/backups/kc")
        #expect(ConfigurationLoader.environmentName(for: "backup.keep") == "KEYCHAIND_BACKUP_KEEP")
    }

    @Test func badEnvironmentValueNamesTheVariable() throws {
        let error = #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(fileText: nil, environment: ["KEYCHAIND_THREADS": "many"], flags: [:])
        }
        #expect(error?.description.contains("KEYCHAIND_THREADS") == true)
        #expect(error?.description.contains("threads") == true)
    }

    @Test func environmentNames() {
        #expect(ConfigurationLoader.environmentName(for: "dataDir") == "KEYCHAIND_DATA_DIR")
        #expect(ConfigurationLoader.environmentName(for: "limits.maxBodyBytes") == "KEYCHAIND_LIMITS_MAX_BODY_BYTES")
        #expect(ConfigurationLoader.environmentName(for: "tls.certFile") == "KEYCHAIND_TLS_CERT_FILE")
    }

    @Test(arguments: [
        ("127.0.0.1:8420", "127.0.0.1", UInt16(8420)), ("[::1]:80", "::1", UInt16(80)), ("0.0.0.0:0", "0.0.0.0", UInt16(0)),
    ])
    func listenAddresses(text: String, host: String, port: UInt16) {
        let address = ListenAddress(parsing: text)
        #expect(address?.host == host)
        #expect(address?.port == port)
    }

    @Test(arguments: ["8420", ":8420", "host:", "host:70000", "::1:80", "[::1]80"])
    func invalidListenAddresses(text: String) {
        #expect(ListenAddress(parsing: text) == nil)
    }
}
