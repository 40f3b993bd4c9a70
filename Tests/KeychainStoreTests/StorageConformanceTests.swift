import Foundation
import KeychainCore
import KeychainTestSupport
import Testing
@testable import KeychainStore

/// The storage protocols' conformance suites (`KeychainTestSupport`), each run against every
/// backend that has the protocol: one test per protocol and backend. A new backend is a factory
/// here and these calls. (`ItemStore`'s suite runs over `StoreKind`, in ItemStoreConformanceTests.)

@Suite("Conformance: in memory")
struct InMemoryConformanceTests {
    @Test func clientStore() throws {
        try ClientStoreConformance { (InMemoryClientStore(), nil) }.run()
    }
}

@Suite("Conformance: SQLite")
struct SQLiteConformanceTests {
    /// The vault's own store (its first admin in it), as the server uses it.
    @Test func clientStore() throws {
        try ClientStoreConformance {
            let fixture = try VaultFixture()
            return (fixture.vault.clients, fixture)
        }.run()
    }
}

@Suite("Conformance: PostgreSQL")
struct PostgreSQLConformanceTests {
    @Test func clientStore() throws {
        try ClientStoreConformance {
            let database = try PGTestDatabase()
            try PGMigrations.apply(on: database.connect())
            return (PGClientStore(connections: PGConnections(settings: PGSettings(url: database.url))), nil)
        }.run()
    }
}
