import Foundation
import Testing

@testable import KeychainConfig

/// Issue 29's connection settings: the per-address connection limit and the header deadline.
struct ConnectionLimitConfigurationTests {
    @Test func defaults() {
        let defaults = ServerConfiguration()
        #expect(defaults.maxConnectionsPerAddress == 128)
        #expect(defaults.headerTimeoutSeconds == 10)
    }

    @Test func fromFileAndEnvironment() throws {
        let file = """
            [limits]
            maxConnectionsPerAddress = 0
            headerTimeoutSeconds = 5
            """
        let fromFile = try ConfigurationLoader.load(fileText: file, environment: [:], flags: [:])
        #expect(fromFile.maxConnectionsPerAddress == 0 && fromFile.headerTimeoutSeconds == 5)
        let environment = [
            "KEYCHAIND_LIMITS_MAX_CONNECTIONS_PER_ADDRESS": "16", "KEYCHAIND_LIMITS_HEADER_TIMEOUT_SECONDS": "3",
        ]
        let fromEnvironment = try ConfigurationLoader.load(fileText: file, environment: environment, flags: [:])
        #expect(fromEnvironment.maxConnectionsPerAddress == 16 && fromEnvironment.headerTimeoutSeconds == 3)
    }

    @Test(arguments: [
        ("[limits]\nmaxConnectionsPerAddress = -1", "limits.maxConnectionsPerAddress"),
        ("[limits]\nheaderTimeoutSeconds = 0", "limits.headerTimeoutSeconds"),
    ])
    func badValuesNameTheKey(text: String, key: String) {
        let error = #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(fileText: text, filePath: "test.toml", environment: [:], flags: [:])
        }
        #expect(error?.description.contains(key) == true, "\(error?.description ?? "")")
    }
}
