import Foundation
import KeychainTestSupport
import Testing
@testable import KeychainStore
@testable import KeychainPostgreSQL
@testable import KeychainSQLite

/// The vault's cluster id (`Vault.clusterID`): a random UUID made once with the database, or by
/// the migration for a database made before it, kept across restarts and shared by every node.
@Suite("Cluster id")
struct ClusterIDTests {
    static let uuidForm = #"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"#

    static func expectUUID(_ id: String) {
        #expect(id.range(of: uuidForm, options: .regularExpression) != nil, "\(id)")
    }

    @Test func sqliteKeepsItAcrossReopens() throws {
        let fixture = try VaultFixture()
        let id = fixture.vault.clusterID
        Self.expectUUID(id)
        fixture.vault.close()
        let reopened = try fixture.dataDirectory.open(logger: quietLogger)
        defer { reopened.close() }
        #expect(reopened.clusterID == id)
        #expect(try VaultFixture().vault.clusterID != id)
    }

    /// A database made before migration 6 is given one when it is migrated.
    @Test func sqliteMigrationMakesOneForAnOlderDatabase() throws {
        let pool = try ConnectionPool(path: ":memory:")
        defer { pool.close() }
        try pool.write { db in
            for migration in Migrations.all where migration.version <= 5 {
                try db.transaction { try db.executeScript(migration.script) }
            }
            try db.executeScript("PRAGMA user_version = 5")
            try Migrations.apply(on: db)
        }
        let id = try pool.read { db in try db.scalarText("SELECT cluster_id FROM vault_identity WHERE id = 1") }
        Self.expectUUID(try #require(id))
    }

    @Test func everyPostgreSQLNodeHasTheSameOne() throws {
        let cluster = try Cluster(nodes: 2)
        let id = cluster.nodes[0].clusterID
        Self.expectUUID(id)
        #expect(cluster.nodes[1].clusterID == id)
        #expect(try PGClusterState.clusterID(on: cluster.database.connect()) == id)
        #expect(try Cluster(nodes: 1).nodes[0].clusterID != id)
    }
}
