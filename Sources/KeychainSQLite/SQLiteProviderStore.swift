public import KeychainCore
import KeychainStore

/// `ProviderStore` over the `oauth_providers` table (migration 7): one row per provider, its
/// settings as JSON, its client secret sealed and bound to its name (`ProviderRecord`).
final class SQLiteProviderStore: ProviderStore {
    private let pool: ConnectionPool
    private let keyring: Keyring

    init(pool: ConnectionPool, keyring: Keyring) {
        self.pool = pool
        self.keyring = keyring
    }

    func save(_ provider: OAuthProvider) throws -> Bool {
        try StoreErrors.map {
            try keyring.withKeys {
                let settings = try ProviderRecord.encode(provider)
                return try pool.write { db in
                    try keyring.transaction(on: db) {
                        let box = try provider.clientSecret.map { secret in
                            try keyring.prepareForSealing(1, on: db)
                            return try keyring.seal(secret, binding: .providerClientSecret(provider: provider.name), on: db)
                        }
                        let replaced = try db.scalarInt("SELECT count(*) FROM oauth_providers WHERE name = ?", [.text(provider.name)]) == 1
                        try db.execute(
                            """
                            INSERT INTO oauth_providers (name, settings, client_secret) VALUES (?, ?, ?)
                            ON CONFLICT (name) DO UPDATE SET settings = excluded.settings, client_secret = excluded.client_secret
                            """, [.text(provider.name), .text(settings), box.map { .blob($0) } ?? .null])
                        return replaced
                    }
                }
            }
        }
    }

    func provider(named name: String) throws -> OAuthProvider? {
        try rows("WHERE name = ?", [.text(name)]).first
    }

    func list() throws -> [OAuthProvider] {
        try rows("ORDER BY name", [])
    }

    func delete(named name: String) throws -> Bool {
        try StoreErrors.map { try pool.write { db in try db.execute("DELETE FROM oauth_providers WHERE name = ?", [.text(name)]) > 0 } }
    }

    /// The providers the clause selects, their client secrets opened.
    private func rows(_ clause: String, _ values: [SQLiteValue]) throws -> [OAuthProvider] {
        try StoreErrors.map {
            try keyring.withKeys {
                let rows = try pool.read { db in
                    try db.query("SELECT name, settings, client_secret FROM oauth_providers \(clause)", values) { row in
                        (name: row.text(0), settings: row.text(1), box: row.isNull(2) ? nil : row.blob(2))
                    }
                }
                return try rows.map { row in
                    let secret = try row.box.map { try keyring.open($0, binding: .providerClientSecret(provider: row.name)) }
                    return try ProviderRecord.decode(name: row.name, settings: row.settings, clientSecret: secret)
                }
            }
        }
    }
}

/// Re-encryption of the providers' client secrets (`SQLiteItemStore`'s `ReencryptingStore`).
extension SQLiteProviderStore {
    private static let term = "substr(client_secret, \(SealedBox.termStart), \(SealedBox.termLength))"

    static func countSealed(olderThan term: UInt32, on db: SQLiteConnection) throws -> Int {
        Int(try db.scalarInt(
            "SELECT count(*) FROM oauth_providers WHERE client_secret IS NOT NULL AND \(Self.term) < ?",
            [.blob(SealedBox.termKey(term))]) ?? 0)
    }

    static func hasSealed(underTerm term: UInt32, on db: SQLiteConnection) throws -> Bool {
        try db.scalarInt(
            "SELECT EXISTS (SELECT 1 FROM oauth_providers WHERE client_secret IS NOT NULL AND \(Self.term) = ?)",
            [.blob(SealedBox.termKey(term))]) == 1
    }

    /// Up to `limit` client secrets sealed under a term older than `term`, by provider name.
    static func sealed(olderThan term: UInt32, limit: Int, on db: SQLiteConnection) throws -> [(name: String, box: [UInt8])] {
        try db.query(
            "SELECT name, client_secret FROM oauth_providers WHERE client_secret IS NOT NULL AND \(Self.term) < ? LIMIT ?",
            [.blob(SealedBox.termKey(term)), .integer(Int64(limit))]
        ) { row in (row.text(0), row.blob(1)) }
    }

    static func replaceSecret(of name: String, with box: [UInt8], on db: SQLiteConnection) throws {
        try db.execute("UPDATE oauth_providers SET client_secret = ? WHERE name = ?", [.blob(box), .text(name)])
    }
}
