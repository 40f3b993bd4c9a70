import KeychainConfig
import Testing

/// The `storage.*` keys: SQLite by default, PostgreSQL with a connection string.
struct StorageConfigurationTests {
    @Test func defaultsAndEveryKeyFromFileAndEnvironment() throws {
        let defaults = ServerConfiguration()
        #expect(defaults.storageBackend == .sqlite)
        #expect(defaults.postgresqlURL == "")
        #expect(defaults.postgresqlConnectTimeoutSeconds == 5)
        #expect(defaults.postgresqlStatementTimeoutSeconds == 10)
        try defaults.checkStorage()

        let file = """
            [storage]
            backend = "postgresql"
            [storage.postgresql]
            url = "host=db1,db2 dbname=keychaind target_session_attrs=read-write"
            connectTimeoutSeconds = 2
            """
        let loaded = try ConfigurationLoader.load(
            fileText: file, environment: ["KEYCHAIND_STORAGE_POSTGRESQL_STATEMENT_TIMEOUT_SECONDS": "3"], flags: [:])
        #expect(loaded.storageBackend == .postgresql)
        #expect(loaded.postgresqlURL == "host=db1,db2 dbname=keychaind target_session_attrs=read-write")
        #expect(loaded.postgresqlConnectTimeoutSeconds == 2)
        #expect(loaded.postgresqlStatementTimeoutSeconds == 3)
        try loaded.checkStorage()
    }

    @Test func anUnknownBackendOrAPostgreSQLBackendWithoutAURLIsRefused() throws {
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(fileText: "[storage]\nbackend = \"mysql\"", environment: [:], flags: [:])
        }
        let withoutURL = try ConfigurationLoader.load(
            fileText: nil, environment: ["KEYCHAIND_STORAGE_BACKEND": "postgresql"], flags: [:])
        #expect(throws: ConfigurationError.self) { try withoutURL.checkStorage() }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(
                fileText: "[storage.postgresql]\nstatementTimeoutSeconds = 0", environment: [:], flags: [:])
        }
    }
}
