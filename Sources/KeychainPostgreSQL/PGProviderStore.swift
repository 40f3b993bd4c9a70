import KeychainCore
import KeychainStore

/// `ProviderStore` over the `oauth_providers` table on PostgreSQL (migration 8), as on SQLite:
/// the client secret sealed against this node's reserved encryptions, bound to the provider's
/// name. Nodes cache no provider: an exchange reads it, so a new secret set on one node is used
/// by every node's next exchange.
final class PGProviderStore: ProviderStore {
    private let connections: PGConnections
    private let keyring: Keyring
    private let reservations: PGKeyringStorage

    init(connections: PGConnections, keyring: Keyring, reservations: PGKeyringStorage) {
        self.connections = connections
        self.keyring = keyring
        self.reservations = reservations
    }

    func save(_ provider: OAuthProvider) throws -> Bool {
        try withKeysAndConnection { db in
            let box = try provider.clientSecret.map {
                try keyring.seal($0, binding: .providerClientSecret(provider: provider.name), reservingFrom: reservations)
            }
            // xmax = 0 only for a row this statement inserted.
            return try db.execute(
                """
                INSERT INTO oauth_providers (name, settings, client_secret) VALUES ($1, $2, $3)
                ON CONFLICT (name) DO UPDATE SET settings = excluded.settings, client_secret = excluded.client_secret
                RETURNING xmax <> 0
                """, [.text(provider.name), .text(try ProviderRecord.encode(provider)), box.map { .bytea($0) } ?? .null]
            ).bool(0, 0)
        }
    }

    func provider(named name: String) throws -> OAuthProvider? {
        try rows("WHERE name = $1", [.text(name)]).first
    }

    func list() throws -> [OAuthProvider] {
        try rows("ORDER BY name", [])
    }

    func delete(named name: String) throws -> Bool {
        try StoreErrors.map {
            try connections.withConnection { db in
                try db.execute("DELETE FROM oauth_providers WHERE name = $1", [.text(name)]).affectedRows > 0
            }
        }
    }

    /// The providers the clause selects, their client secrets opened.
    private func rows(_ clause: String, _ values: [PGValue]) throws -> [OAuthProvider] {
        try withKeysAndConnection { db in
            let rows = try db.execute("SELECT name, settings, client_secret FROM oauth_providers \(clause)", values)
            return try (0..<rows.count).map { row in
                let name = rows.text(row, 0)
                let secret = try rows.isNull(row, 2)
                    ? nil : keyring.open(rows.bytes(row, 2), binding: .providerClientSecret(provider: name))
                return try ProviderRecord.decode(name: name, settings: rows.text(row, 1), clientSecret: secret)
            }
        }
    }

    private func withKeysAndConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        try StoreErrors.map { try keyring.withKeys { try connections.withConnection(body) } }
    }
}

/// Re-encryption of the providers' client secrets (`PGItemStore`'s `ReencryptingStore`).
extension PGProviderStore {
    private static let term = "substring(client_secret FROM \(SealedBox.termStart) FOR \(SealedBox.termLength))"

    static func countSealed(olderThan term: UInt32, on db: PGConnection) throws -> Int {
        Int(try db.execute(
            "SELECT count(*) FROM oauth_providers WHERE client_secret IS NOT NULL AND \(Self.term) < $1",
            [.bytea(SealedBox.termKey(term))]
        ).int64(0, 0))
    }

    static func hasSealed(underTerm term: UInt32, on db: PGConnection) throws -> Bool {
        try db.execute(
            "SELECT 1 FROM oauth_providers WHERE client_secret IS NOT NULL AND \(Self.term) = $1 LIMIT 1",
            [.bytea(SealedBox.termKey(term))]
        ).count > 0
    }

    /// Re-seals up to `limit` client secrets sealed under a term older than `term`, in the
    /// transaction open on `db`; returns how many.
    static func reencrypt(
        olderThan term: UInt32, limit: Int, keyring: Keyring, reservations: PGKeyringStorage, on db: PGConnection
    ) throws -> Int {
        let rows = try db.execute(
            """
            SELECT name, client_secret FROM oauth_providers
            WHERE client_secret IS NOT NULL AND \(Self.term) < $1 LIMIT $2 FOR UPDATE
            """,
            [.bytea(SealedBox.termKey(term)), .int8(Int64(limit))])
        for row in 0..<rows.count {
            let binding = SealBinding.providerClientSecret(provider: rows.text(row, 0))
            let plaintext = try keyring.open(rows.bytes(row, 1), binding: binding)
            try db.execute(
                "UPDATE oauth_providers SET client_secret = $1 WHERE name = $2",
                [.bytea(try keyring.seal(plaintext, binding: binding, reservingFrom: reservations)), .text(rows.text(row, 0))])
        }
        return rows.count
    }
}
