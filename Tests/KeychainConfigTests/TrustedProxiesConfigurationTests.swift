import KeychainCore
import Testing

@testable import KeychainConfig

/// `server.trustedProxies`: a TOML array in the file, commas in the environment, checked at start.
struct TrustedProxiesConfigurationTests {
    @Test func noneByDefault() throws {
        #expect(ServerConfiguration().trustedProxies.networks.isEmpty)
        #expect(try ConfigurationLoader.load(fileText: "[server]\ntrustedProxies = []", environment: [:], flags: [:])
            .trustedProxies.networks.isEmpty)
    }

    @Test func fromFileAndEnvironment() throws {
        let file = """
            [server]
            trustedProxies = ["10.0.0.0/8", "127.0.0.1/32",  "::1/128", "fd00::/8", "192.0.2.1", ]  # the proxies
            """
        let fromFile = try ConfigurationLoader.load(fileText: file, environment: [:], flags: [:])
        #expect(fromFile.trustedProxies.networks.map(\.description) == [
            "10.0.0.0/8", "127.0.0.1/32", "::1/128", "fd00::/8", "192.0.2.1",
        ])
        let variable = ConfigurationLoader.environmentName(for: "server.trustedProxies")
        #expect(variable == "KEYCHAIND_SERVER_TRUSTED_PROXIES")
        let fromEnvironment = try ConfigurationLoader.load(
            fileText: file, environment: [variable: " 10.1.0.0/16 ,2001:db8::/32"], flags: [:])
        #expect(fromEnvironment.trustedProxies.networks.map(\.description) == ["10.1.0.0/16", "2001:db8::/32"])
    }

    @Test(arguments: [
        ("[server]\ntrustedProxies = [\"10.0.0.0/33\"]", "test.toml:2: server.trustedProxies", "10.0.0.0/33"),
        ("[server]\ntrustedProxies = [\"10.0.0.0/8\", \"proxy.internal\"]", "server.trustedProxies", "proxy.internal"),
        ("[server]\ntrustedProxies = \"::1/129\"", "server.trustedProxies", "::1/129"),
        ("[server]\ntrustedProxies = [10.0.0.0/8]", "server.trustedProxies", "strings"),
        ("[server]\ntrustedProxies = [\"10.0.0.0/8\"", "server.trustedProxies", "unterminated array"),
    ])
    func badValuesNameTheKey(text: String, key: String, detail: String) {
        let error = #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(fileText: text, filePath: "test.toml", environment: [:], flags: [:])
        }
        let message = error?.description ?? ""
        #expect(message.contains(key) && message.contains(detail), "\(message)")
    }

    @Test func aBadEnvironmentValueNamesTheVariableAndTheKey() {
        let error = #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(
                fileText: nil, environment: ["KEYCHAIND_SERVER_TRUSTED_PROXIES": "10.0.0.0/8,unknown"], flags: [:])
        }
        let message = error?.description ?? ""
        #expect(message.contains("KEYCHAIND_SERVER_TRUSTED_PROXIES: server.trustedProxies") && message.contains("\"unknown\""))
    }
}
