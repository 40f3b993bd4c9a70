import Foundation
import KeychainCore
import KeychainTestSupport
import Testing
@testable import KeychainStore
@testable import KeychainPostgreSQL
@testable import KeychainSQLite

/// The storage protocols' conformance suites (`KeychainTestSupport`), each run against every
/// backend that has the protocol: one test per protocol and backend (`ItemStore`'s with a case per
/// check, so that its many checks run in parallel and report by name). A new backend is a factory
/// here and these calls.

/// The stores every `ItemStore` test runs against: the reference, the SQLite ones, and
/// PostgreSQL (a schema of its own on the tests' throwaway cluster).
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case inMemory
    case sqliteMemory
    case sqliteFile
    case postgresql

    var testDescription: String { rawValue }

    /// A new, empty store and whatever keeps it alive.
    func make() throws -> (store: any ItemStore, keepAlive: AnyObject?) {
        switch self {
        case .inMemory:
            return (InMemoryItemStore(), nil)
        case .sqliteMemory:
            let pool = try ConnectionPool(path: ":memory:")
            try pool.write { try Migrations.apply(on: $0) }
            let masterKey = try MasterKeyFile.generate()
            let keyring = try Keyring.create(
                storage: KeyringTable(pool: pool), masterKey: masterKey, source: MasterKeySource { [masterKey] }, logger: quietLogger)
            return (SQLiteItemStore(pool: pool, keyring: keyring, logger: quietLogger), pool)
        case .sqliteFile:
            let fixture = try VaultFixture()
            return (fixture.vault.items, fixture)
        case .postgresql:
            return (try PGTestDatabase().itemStore(), nil)
        }
    }
}

@Suite("Conformance: in memory")
struct InMemoryConformanceTests {
    @Test(arguments: ItemStoreConformance.Check.allCases)
    func itemStore(check: ItemStoreConformance.Check) throws {
        try ItemStoreConformance { try StoreKind.inMemory.make() }.run(check)
    }

    @Test func clientStore() throws {
        try ClientStoreConformance { (InMemoryClientStore(), nil) }.run()
    }

    @Test func providerStore() throws {
        try ProviderStoreConformance { (InMemoryProviderStore(), nil, nil) }.run()
    }

    @Test func providerHoldStore() throws {
        try ProviderHoldStoreConformance { ([InMemoryProviderHoldStore()], nil) }.run()
    }

    @Test(arguments: KVConformance.Check.allCases)
    func kv(check: KVConformance.Check) throws {
        try KVConformance { _ in .init(store: InMemoryItemStore(), keepAlive: nil) }.run(check)
    }

    @Test func connectSessionStore() throws {
        try ConnectSessionStoreConformance { (InMemoryConnectSessionStore(), nil, nil) }.run()
    }

    @Test func webhookStore() throws {
        try WebhookStoreConformance { (InMemoryItemStore(), nil) }.run()
    }
}

@Suite("Conformance: SQLite")
struct SQLiteConformanceTests {
    /// `SQLiteItemStore` over a database in memory, and the store of a vault on file.
    @Test(arguments: [StoreKind.sqliteMemory, .sqliteFile], ItemStoreConformance.Check.allCases)
    func itemStore(kind: StoreKind, check: ItemStoreConformance.Check) throws {
        try ItemStoreConformance { try kind.make() }.run(check)
    }

    /// The vault's own store (its first admin in it), as the server uses it.
    @Test func clientStore() throws {
        try ClientStoreConformance {
            let fixture = try VaultFixture()
            return (fixture.vault.clients, fixture)
        }.run()
    }

    @Test func loginRoleStore() throws {
        try LoginRoleStoreConformance {
            let pool = try ConnectionPool(path: ":memory:")
            try pool.write { try Migrations.apply(on: $0) }
            return (SQLiteLoginRoleStore(pool: pool), pool)
        }.run()
    }

    /// The vault's own store, as the server uses it (its verifiers sealed by the vault's keyring).
    @Test func connectSessionStore() throws {
        try ConnectSessionStoreConformance {
            let fixture = try VaultFixture()
            return (fixture.vault.connectSessions, nil, fixture)
        }.run()
    }

    /// The store of a vault on file, as the server uses it.
    @Test func webhookStore() throws {
        try WebhookStoreConformance {
            let fixture = try VaultFixture()
            let store = try #require(fixture.vault.webhooks as? SQLiteItemStore)
            return (store, fixture)
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

    /// The vault's providers over a database on file.
    @Test func providerStore() throws {
        try ProviderStoreConformance {
            let fixture = try VaultFixture()
            let pool = try #require(fixture.vault.sqlitePool)
            let database = ProviderStoreConformance.Database(
                rawBytes: {
                    try pool.read { db in
                        try db.query("SELECT CAST(name || settings AS BLOB) || coalesce(client_secret, x'') FROM oauth_providers") {
                            $0.blob(0)
                        }
                    }.flatMap { $0 }
                },
                copyClientSecret: { from, to in
                    _ = try pool.write { db in
                        try db.execute(
                            "UPDATE oauth_providers SET client_secret = (SELECT client_secret FROM oauth_providers WHERE name = ?) WHERE name = ?",
                            [.text(from), .text(to)])
                    }
                })
            return (fixture.vault.providers, database, fixture)
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

    /// `SQLiteItemStore` over a vault's database on file: its usage is `group_usage`'s row, its
    /// raw bytes the database file and its WAL.
    @Test(arguments: KVConformance.Check.allCases)
    func kv(check: KVConformance.Check) throws {
        try KVConformance { quota in
            let fixture = try VaultFixture()
            let pool = try #require(fixture.vault.sqlitePool)
            let keyring = fixture.vault.keyring
            let store = SQLiteItemStore(pool: pool, keyring: keyring, logger: quietLogger, quota: quota)
            let path = fixture.dataDirectory.databasePath
            let run = { (sql: String, values: [SQLiteValue]) in _ = try pool.write { db in try db.execute(sql, values) } }
            let database = KVConformance.Database(
                rawBytes: {
                    [path, path + "-wal"].flatMap { FileManager.default.contents(atPath: $0).map(Array.init) ?? [] }
                },
                copyData: { from, fromVersion, to, toVersion in
                    // A version's data is in `kv_versions` or, for the newest, in its secret's row.
                    let source = """
                        coalesce(
                            (SELECT data FROM kv_versions WHERE access_group = ?1 AND path = ?2 AND version = ?3),
                            (SELECT head_data FROM kv_secrets WHERE access_group = ?1 AND path = ?2 AND head_version = ?3))
                        """
                    let values: [SQLiteValue] = [
                        .text(from.group), .text(from.path), .integer(Int64(fromVersion)), .text(to.group), .text(to.path),
                        .integer(Int64(toVersion)),
                    ]
                    try run("UPDATE kv_versions SET data = \(source) WHERE access_group = ?4 AND path = ?5 AND version = ?6", values)
                    try run("UPDATE kv_secrets SET head_data = \(source) WHERE access_group = ?4 AND path = ?5 AND head_version = ?6", values)
                },
                copyCustomMetadata: { from, to in
                    try run(
                        """
                        UPDATE kv_secrets SET custom_metadata = (SELECT custom_metadata FROM kv_secrets WHERE access_group = ? AND path = ?)
                        WHERE access_group = ? AND path = ?
                        """,
                        [.text(from.group), .text(from.path), .text(to.group), .text(to.path)])
                })
            return .init(
                store: store, usage: { group in try pool.read { try GroupUsageTable.usage(of: group, on: $0) } },
                database: database, reencryption: .init(rotate: { try keyring.rotate() }, store: store), keepAlive: fixture)
        }.run(check)
    }

    /// The vault's own store and another over its database (the rows are the hold).
    @Test func providerHoldStore() throws {
        try ProviderHoldStoreConformance {
            let fixture = try VaultFixture()
            let pool = try #require(fixture.vault.sqlitePool)
            return ([fixture.vault.providerHolds, SQLiteProviderHoldStore(pool: pool)], fixture)
        }.run()
    }

    /// One node: no lock, the refresher's single flight is the lock.
    @Test func refreshExchangeLock() throws {
        RefreshExchangeLockConformance.expectNone(try VaultFixture().vault.refreshExchangeLock)
    }

    /// `SQLiteItemStore` over a vault's database; the usage is `group_usage`'s row.
    @Test func groupQuota() throws {
        try GroupQuotaConformance { quota in
            let fixture = try VaultFixture()
            let pool = try #require(fixture.vault.sqlitePool)
            let keyring = fixture.vault.keyring
            let store = { (quota: GroupQuota) in SQLiteItemStore(pool: pool, keyring: keyring, logger: quietLogger, quota: quota) }
            return .init(
                store: store(quota), withQuota: store,
                usage: { group in try pool.read { try GroupUsageTable.usage(of: group, on: $0) } }, keepAlive: fixture)
        }.run()
    }
}

@Suite("Conformance: PostgreSQL")
struct PostgreSQLConformanceTests {
    @Test(arguments: ItemStoreConformance.Check.allCases)
    func itemStore(check: ItemStoreConformance.Check) throws {
        try ItemStoreConformance { try StoreKind.postgresql.make() }.run(check)
    }

    @Test func clientStore() throws {
        try ClientStoreConformance {
            let database = try PGTestDatabase()
            try PGMigrations.apply(on: database.connect())
            return (PGClientStore(connections: PGConnections(settings: PGSettings(url: database.url))), nil)
        }.run()
    }

    @Test func loginRoleStore() throws {
        try LoginRoleStoreConformance {
            let database = try PGTestDatabase()
            try PGMigrations.apply(on: database.connect())
            return (PGLoginRoleStore(connections: PGConnections(settings: PGSettings(url: database.url))), nil)
        }.run()
    }

    /// Two stores over one database, each with connections of its own: two nodes taking one state.
    @Test func connectSessionStore() throws {
        try ConnectSessionStoreConformance {
            let database = try PGTestDatabase()
            let items = try database.itemStore()
            let node = {
                PGConnectSessionStore(
                    connections: PGConnections(settings: PGSettings(url: database.url)), keyring: items.keyring,
                    reservations: items.reservations)
            }
            return (node(), node(), nil)
        }.run()
    }

    @Test func webhookStore() throws {
        try WebhookStoreConformance { (try PGTestDatabase().itemStore(), nil) }.run()
    }

    /// `PGKeyringStorage`, shared by the nodes (encryptions reserved in blocks).
    @Test func keyringStorage() throws {
        try KeyringStorageConformance.runShared {
            let database = try PGTestDatabase()
            try PGMigrations.apply(on: database.connect())
            return (PGKeyringStorage(settings: PGSettings(url: database.url)), nil)
        }
    }

    /// A node's providers over a schema of its own.
    @Test func providerStore() throws {
        try ProviderStoreConformance {
            let cluster = try Cluster(nodes: 1)
            let node = cluster.nodes[0]
            let database = ProviderStoreConformance.Database(
                rawBytes: {
                    let rows = try cluster.database.connect().execute(
                        "SELECT convert_to(name || settings, 'UTF8') || coalesce(client_secret, '\\x'::bytea) FROM oauth_providers")
                    return (0..<rows.count).flatMap { rows.bytes($0, 0) }
                },
                copyClientSecret: { from, to in
                    _ = try cluster.database.connect().execute(
                        "UPDATE oauth_providers SET client_secret = (SELECT client_secret FROM oauth_providers WHERE name = $1) WHERE name = $2",
                        [.text(from), .text(to)])
                })
            return (node.providers, database, cluster)
        }.run()
    }

    /// Rotated on one node; the other is the other view of the vault.
    @Test func reencryption() throws {
        try ReencryptionConformance {
            let cluster = try Cluster(nodes: 2)
            return .init(vault: cluster.nodes[0], another: { cluster.nodes[1] }, keepAlive: cluster)
        }.run()
    }

    /// `PGItemStore` over a schema of its own; the usage is the sum of the group's shards.
    @Test func groupQuota() throws {
        try GroupQuotaConformance { quota in
            let database = try PGTestDatabase()
            let store = try database.itemStore(quota: quota)
            return .init(
                store: store,
                withQuota: {
                    PGItemStore(connections: store.connections, keyring: store.keyring, reservations: store.reservations, quota: $0)
                },
                usage: database.usage, keepAlive: nil)
        }.run()
    }

    /// `PGItemStore` over a schema of its own; its raw bytes are the KV tables' rows as stored.
    @Test(arguments: KVConformance.Check.allCases)
    func kv(check: KVConformance.Check) throws {
        try KVConformance { quota in
            let database = try PGTestDatabase()
            let store = try database.itemStore(quota: quota)
            let run = { (sql: String, values: [PGValue]) in _ = try database.connect().execute(sql, values) }
            let kvDatabase = KVConformance.Database(
                rawBytes: {
                    let rows = try database.connect().execute(
                        """
                        SELECT convert_to(access_group || path, 'UTF8') || coalesce(data, '\\x'::bytea) FROM kv_versions
                        UNION ALL SELECT convert_to(access_group || path, 'UTF8') || custom_metadata FROM kv_secrets
                        """)
                    return (0..<rows.count).flatMap { rows.bytes($0, 0) }
                },
                copyData: { from, fromVersion, to, toVersion in
                    try run(
                        """
                        UPDATE kv_versions SET data = (SELECT data FROM kv_versions WHERE access_group = $1 AND path = $2 AND version = $3)
                        WHERE access_group = $4 AND path = $5 AND version = $6
                        """,
                        [.text(from.group), .text(from.path), .int8(Int64(fromVersion)), .text(to.group), .text(to.path),
                         .int8(Int64(toVersion))])
                },
                copyCustomMetadata: { from, to in
                    try run(
                        """
                        UPDATE kv_secrets SET custom_metadata = (SELECT custom_metadata FROM kv_secrets WHERE access_group = $1 AND path = $2)
                        WHERE access_group = $3 AND path = $4
                        """,
                        [.text(from.group), .text(from.path), .text(to.group), .text(to.path)])
                })
            return .init(
                store: store, usage: database.usage, database: kvDatabase,
                reencryption: .init(rotate: { try store.keyring.rotate() }, store: store), keepAlive: nil)
        }.run(check)
    }

    /// Two nodes' vaults over one database: a hold one node makes holds on the other.
    @Test func providerHoldStore() throws {
        try ProviderHoldStoreConformance {
            let cluster = try Cluster(nodes: 2)
            return (cluster.nodes.map(\.providerHolds), cluster)
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
