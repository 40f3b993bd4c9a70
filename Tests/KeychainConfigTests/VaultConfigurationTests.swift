import KeychainConfig
import Testing

/// `vault.secretMountAlias`: off by default, from the file or the environment, a boolean only.
struct VaultConfigurationTests {
    @Test func theSecretMountAliasIsOffByDefault() throws {
        #expect(!(try ConfigurationLoader.load(fileText: nil, filePath: "test.toml", environment: [:], flags: [:])).vaultSecretMountAlias)
    }

    @Test func theSecretMountAliasIsReadFromTheFileAndTheEnvironment() throws {
        let fromFile = try ConfigurationLoader.load(fileText: "[vault]\nsecretMountAlias = true", filePath: "test.toml", environment: [:], flags: [:])
        #expect(fromFile.vaultSecretMountAlias)
        let fromEnvironment = try ConfigurationLoader.load(
            fileText: "[vault]\nsecretMountAlias = true", filePath: "test.toml", environment: ["KEYCHAIND_VAULT_SECRET_MOUNT_ALIAS": "false"], flags: [:])
        #expect(!fromEnvironment.vaultSecretMountAlias)
    }

    @Test(arguments: ["[vault]\nsecretMountAlias = 1", "[vault]\nsecretMountAlias = \"yes\""])
    func aValueThatIsNoBooleanIsRefusedByName(_ text: String) {
        let error = #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(fileText: text, filePath: "test.toml", environment: [:], flags: [:])
        }
        #expect(error?.description.contains("vault.secretMountAlias") == true)
    }
}
