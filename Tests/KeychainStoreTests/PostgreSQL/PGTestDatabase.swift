import Foundation
import KeychainCore
import KeychainTestSupport
@testable import KeychainStore
@testable import KeychainPostgreSQL

/// An empty database for one test: a schema of its own on the process's throwaway cluster
/// (`ThrowawayPostgres.shared()`), which every connection made with `url` uses as its search path.
/// Much cheaper than a database per test; the cluster goes when the process ends.
struct PGTestDatabase {
    let url: String

    init() throws {
        let cluster = try ThrowawayPostgres.shared()
        let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try PGConnection(url: cluster.url()).executeScript("CREATE SCHEMA \(schema)")
        url = cluster.url() + " options='-c search_path=\(schema)'"
    }

    func connect() throws -> PGConnection { try PGConnection(url: url) }

    /// A group's usage as the database keeps it: the sum of its shards.
    func usage(of group: String) throws -> GroupUsage {
        let rows = try connect().execute(
            """
            SELECT coalesce(sum(items), 0)::bigint, coalesce(sum(secret_bytes), 0)::bigint,
                coalesce(sum(attribute_bytes), 0)::bigint FROM group_usage WHERE access_group = $1
            """, [.text(group)])
        return GroupUsage(items: rows.int64(0, 0), secretBytes: rows.int64(0, 1), attributeBytes: rows.int64(0, 2))
    }

    /// An item store over this database, its schema migrated and a new keyring made.
    func itemStore(quota: GroupQuota = .unlimited) throws -> PGItemStore {
        try PGMigrations.apply(on: connect())
        let settings = PGSettings(url: url)
        let masterKey = try MasterKeyFile.generate()
        let storage = PGKeyringStorage(settings: settings)
        let keyring = try Keyring.create(
            storage: storage, masterKey: masterKey, source: MasterKeySource { [masterKey] }, logger: quietLogger)
        return PGItemStore(connections: PGConnections(settings: settings), keyring: keyring, reservations: storage, quota: quota)
    }
}
