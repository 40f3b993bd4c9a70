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

    /// `KeyringTable` over a migrated database.
    @Test func keyringStorage() throws {
        try KeyringStorageConformance {
            let pool = try ConnectionPool(path: ":memory:")
            try pool.write { try Migrations.apply(on: $0) }
            return (KeyringTable(pool: pool), pool)
        }.run()
    }

    /// The reopened vault is the other view of it.
    @Test func reencryption() throws {
        try ReencryptionConformance {
            let fixture = try VaultFixture()
            return .init(
                vault: fixture.vault,
                another: {
                    fixture.vault.close()
                    return try fixture.dataDirectory.open(logger: quietLogger)
                }, keepAlive: fixture)
        }.run()
    }

    /// One node: no lock, the refresher's single flight is the lock.
    @Test func refreshExchangeLock() throws {
        RefreshExchangeLockConformance.expectNone(try VaultFixture().vault.refreshExchangeLock)
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

    /// `PGKeyringStorage`, shared by the nodes (encryptions reserved in blocks).
    @Test func keyringStorage() throws {
        try KeyringStorageConformance.runShared {
            let database = try PGTestDatabase()
            try PGMigrations.apply(on: database.connect())
            return (PGKeyringStorage(settings: PGSettings(url: database.url)), nil)
        }
    }

    /// Rotated on one node; the other is the other view of the vault.
    @Test func reencryption() throws {
        try ReencryptionConformance {
            let cluster = try Cluster(nodes: 2)
            return .init(vault: cluster.nodes[0], another: { cluster.nodes[1] }, keepAlive: cluster)
        }.run()
    }

    /// Two nodes' vaults over one database, each with the lock it gives the refresher.
    @Test func refreshExchangeLock() throws {
        try RefreshExchangeLockConformance {
            let cluster = try Cluster(nodes: 2)
            let locks = try cluster.nodes.map { try #require($0.refreshExchangeLock) }
            return (locks, cluster)
        }.run()
    }
}
