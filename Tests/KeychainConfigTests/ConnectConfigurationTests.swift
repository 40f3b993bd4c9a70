import KeychainCore
import Testing

@testable import KeychainConfig

/// `server.publicURL` and `connect.*`: origins checked at start, naming the key.
struct ConnectConfigurationTests {
    @Test func defaultsAndBothLayers() throws {
        let defaults = ServerConfiguration()
        #expect(defaults.publicURL == nil && defaults.connectSessionSeconds == 600 && defaults.connectMaxWaitSeconds == 25)
        #expect(defaults.connectMaxWaitsPerClient == 16 && defaults.connectReturnToOrigins.isEmpty)
        let file = """
            [server]
            publicURL = "https://Vault.Example.com/"
            [connect]
            sessionSeconds = 300
            maxWaitSeconds = 10
            maxWaitsPerClient = 4
            returnToOrigins = ["https://app.example.com", "http://127.0.0.1:3000"]
            """
        let loaded = try ConfigurationLoader.load(fileText: file, environment: [:], flags: [:])
        #expect(loaded.publicURL?.origin == "https://vault.example.com")
        #expect(loaded.connectSessionSeconds == 300 && loaded.connectMaxWaitSeconds == 10 && loaded.connectMaxWaitsPerClient == 4)
        #expect(loaded.connectReturnToOrigins.map(\.origin) == ["https://app.example.com", "http://127.0.0.1:3000"])
        #expect(ConfigurationLoader.environmentName(for: "server.publicURL") == "KEYCHAIND_SERVER_PUBLIC_URL")
        let environment = try ConfigurationLoader.load(
            fileText: file,
            environment: [
                "KEYCHAIND_SERVER_PUBLIC_URL": "http://localhost:8420",
                "KEYCHAIND_CONNECT_RETURN_TO_ORIGINS": "https://a.example, https://b.example:8443",
            ], flags: [:])
        #expect(environment.publicURL?.origin == "http://localhost:8420" && environment.publicURL?.isHTTPS == false)
        #expect(environment.connectReturnToOrigins.map(\.origin) == ["https://a.example", "https://b.example:8443"])
    }

    @Test(arguments: [
        ("[server]\npublicURL = \"http://vault.example.com\"", "server.publicURL", "https"),
        ("[server]\npublicURL = \"https://vault.example.com/keychaind\"", "server.publicURL", "origin"),
        ("[server]\npublicURL = \"ftp://vault.example.com\"", "server.publicURL", "http(s)"),
        ("[connect]\nreturnToOrigins = [\"https://app.example.com?x=1\"]", "connect.returnToOrigins", "origin"),
        ("[connect]\nsessionSeconds = 5", "connect.sessionSeconds", "≥ 10"),
        ("[connect]\nmaxWaitsPerClient = 0", "connect.maxWaitsPerClient", "≥ 1"),
    ])
    func badValuesNameTheKey(text: String, key: String, detail: String) {
        let error = #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(fileText: text, filePath: "test.toml", environment: [:], flags: [:])
        }
        let message = error?.description ?? ""
        #expect(message.contains(key) && message.contains(detail), "\(message)")
    }
}
