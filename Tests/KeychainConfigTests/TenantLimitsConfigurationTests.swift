import Foundation
import Testing

@testable import KeychainConfig

/// Issue 29's tenant settings: the byte bound of an answer and the quotas per access group.
struct TenantLimitsConfigurationTests {
    @Test func defaults() {
        let defaults = ServerConfiguration()
        #expect(defaults.maxAnswerBytes == 16_777_216)
        #expect(defaults.quotaItems == 10_000_000)
        #expect(defaults.quotaSecretBytes == 10_737_418_240)
    }

    @Test func fromFileAndEnvironment() throws {
        let file = """
            [limits]
            maxAnswerBytes = 1048576
            [quota]
            items = 100
            secretBytes = 0
            """
        let fromFile = try ConfigurationLoader.load(fileText: file, environment: [:], flags: [:])
        #expect(fromFile.maxAnswerBytes == 1_048_576 && fromFile.quotaItems == 100 && fromFile.quotaSecretBytes == 0)
        let environment = [
            "KEYCHAIND_LIMITS_MAX_ANSWER_BYTES": "65536", "KEYCHAIND_QUOTA_ITEMS": "0", "KEYCHAIND_QUOTA_SECRET_BYTES": "4096",
        ]
        let fromEnvironment = try ConfigurationLoader.load(fileText: file, environment: environment, flags: [:])
        #expect(fromEnvironment.maxAnswerBytes == 65536)
        #expect(fromEnvironment.quotaItems == 0 && fromEnvironment.quotaSecretBytes == 4096)
    }

    @Test(arguments: [
        ("[limits]\nmaxAnswerBytes = 65535", "limits.maxAnswerBytes"),
        ("[quota]\nitems = -1", "quota.items"),
        ("[quota]\nsecretBytes = \"lots\"", "quota.secretBytes"),
    ])
    func badValuesNameTheKey(text: String, key: String) {
        let error = #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(fileText: text, filePath: "test.toml", environment: [:], flags: [:])
        }
        #expect(error?.description.contains(key) == true, "\(error?.description ?? "")")
    }
}
