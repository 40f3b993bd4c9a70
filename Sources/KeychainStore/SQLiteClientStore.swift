import Foundation
import KeychainCore

/// `ClientStore` over the `clients` table. Lookups go through the UNIQUE index on the token
/// hash; the fetched hash is then compared in constant time.
public final class SQLiteClientStore: ClientStore {
    let pool: ConnectionPool

    init(pool: ConnectionPool) { self.pool = pool }

    public func addClient(_ client: Client, tokenHash: [UInt8]) throws {
        try StoreErrors.map {
            try pool.write { db in
                try db.execute(
                    "INSERT INTO clients (name, access_groups, role, created, token_hash) VALUES (?, ?, ?, ?, ?)",
                    [.text(client.name), .text(try Self.encode(client.accessGroups)), .text(client.role.rawValue),
                     .integer(client.createdAt.millisecondsSince1970), .blob(tokenHash)])
            }
        }
    }

    public func client(forTokenHash tokenHash: [UInt8]) throws -> Client? {
        try StoreErrors.map {
            let rows = try pool.read { db in
                try db.query(
                    "SELECT name, access_groups, role, created, token_hash FROM clients WHERE token_hash = ?",
                    [.blob(tokenHash)]
                ) { row in (try Self.client(from: row), row.blob(4)) }
            }
            guard let (client, stored) = rows.first, constantTimeEqual(stored, tokenHash) else { return nil }
            return client
        }
    }

    public func clients() throws -> [Client] {
        try StoreErrors.map {
            try pool.read { db in
                try db.query("SELECT name, access_groups, role, created FROM clients ORDER BY name") {
                    try Self.client(from: $0)
                }
            }
        }
    }

    public func removeClient(named name: String) throws -> Bool {
        try StoreErrors.map {
            try pool.write { db in try db.execute("DELETE FROM clients WHERE name = ?", [.text(name)]) > 0 }
        }
    }

    public func replaceToken(ofClient name: String, tokenHash: [UInt8]) throws -> Bool {
        try StoreErrors.map {
            try pool.write { db in
                try db.execute("UPDATE clients SET token_hash = ? WHERE name = ?", [.blob(tokenHash), .text(name)]) > 0
            }
        }
    }

    private static func encode(_ groups: [String]) throws -> String {
        String(decoding: try JSONEncoder().encode(groups), as: UTF8.self)
    }

    private static func client(from row: SQLiteStatement) throws -> Client {
        guard let groups = try? JSONDecoder().decode([String].self, from: Data(row.text(1).utf8)),
            let role = Client.Role(rawValue: row.text(2))
        else { throw KeychainError.decode("a stored client record is malformed") }
        return Client(name: row.text(0), accessGroups: groups, role: role, createdAt: Date(millisecondsSince1970: row.int64(3)))
    }
}
