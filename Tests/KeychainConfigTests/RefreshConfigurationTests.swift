import KeychainConfig
import Testing

/// The `refresh.*` keys of server-side token refresh.
struct RefreshConfigurationTests {
    @Test func defaultsAndEveryKeyFromFileAndEnvironment() throws {
        let defaults = ServerConfiguration()
        #expect(defaults.refreshCAFile == "")
        #expect(defaults.refreshTimeoutSeconds == 10)
        #expect(defaults.refreshWaitSeconds == 15)
        #expect(defaults.refreshIntervalSeconds == 5)
        #expect(defaults.refreshConcurrency == 4)

        let file = """
            [refresh]
            caFile = "/etc/ssl/provider-ca.pem"
            timeoutSeconds = 3
            waitSeconds = 4
            concurrency = 2
            """
        let loaded = try ConfigurationLoader.load(
            fileText: file, environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"], flags: [:])
        #expect(loaded.refreshCAFile == "/etc/ssl/provider-ca.pem")
        #expect(loaded.refreshTimeoutSeconds == 3)
        #expect(loaded.refreshWaitSeconds == 4)
        #expect(loaded.refreshIntervalSeconds == 0)
        #expect(loaded.refreshConcurrency == 2)
        let fromEnvironment = try ConfigurationLoader.load(
            fileText: file, environment: ["KEYCHAIND_REFRESH_CONCURRENCY": "16"], flags: [:])
        #expect(fromEnvironment.refreshConcurrency == 16)
    }

    @Test func webhookRetrySeconds() throws {
        #expect(ServerConfiguration().webhookRetrySeconds == 86_400)
        let loaded = try ConfigurationLoader.load(fileText: "[webhooks]\nretrySeconds = 600", environment: [:], flags: [:])
        #expect(loaded.webhookRetrySeconds == 600)
        let fromEnvironment = try ConfigurationLoader.load(
            fileText: nil, environment: ["KEYCHAIND_WEBHOOKS_RETRY_SECONDS": "30"], flags: [:])
        #expect(fromEnvironment.webhookRetrySeconds == 30)
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(fileText: "[webhooks]\nretrySeconds = -1", environment: [:], flags: [:])
        }
    }

    @Test func aConcurrencyBelowOneIsRefused() {
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(fileText: "[refresh]\nconcurrency = 0", environment: [:], flags: [:])
        }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(fileText: nil, environment: ["KEYCHAIND_REFRESH_CONCURRENCY": "-1"], flags: [:])
        }
    }

    @Test func maxRetryAfterSecondsDefaultsTo600AndIsAtLeastOne() throws {
        #expect(ServerConfiguration().refreshMaxRetryAfterSeconds == 600)
        let file = "[refresh]\nmaxRetryAfterSeconds = 120"
        #expect(try ConfigurationLoader.load(fileText: file, environment: [:], flags: [:]).refreshMaxRetryAfterSeconds == 120)
        let fromEnvironment = try ConfigurationLoader.load(
            fileText: file, environment: ["KEYCHAIND_REFRESH_MAX_RETRY_AFTER_SECONDS": "30"], flags: [:])
        #expect(fromEnvironment.refreshMaxRetryAfterSeconds == 30)
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(fileText: "[refresh]\nmaxRetryAfterSeconds = 0", environment: [:], flags: [:])
        }
    }

    @Test func timeoutsBelowOneSecondAreRefused() {
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(fileText: "[refresh]\ntimeoutSeconds = 0", environment: [:], flags: [:])
        }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(fileText: nil, environment: ["KEYCHAIND_REFRESH_WAIT_SECONDS": "0"], flags: [:])
        }
    }
}
