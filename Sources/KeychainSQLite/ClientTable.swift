import Foundation
import KeychainCore
import KeychainStore

/// The `clients` table: one row per client, its access groups as a JSON array, its tokens'
/// lifetime (migration 5). Its tokens are in `tokens` (`TokenTable`).
enum ClientTable {
    static let columns = "name, access_groups, role, created, token_ttl, token_max_ttl"

    static func insert(_ client: Client, on db: SQLiteConnection) throws {
        try db.execute(
            "INSERT INTO clients (\(columns)) VALUES (?, ?, ?, ?, ?, ?)",
            [.text(client.name), .text(try ClientRecord.encode(client.accessGroups)), .text(client.role.rawValue),
             .integer(client.createdAt.millisecondsSince1970),
             client.tokenLifetime.map { .integer($0.ttlSeconds) } ?? .null,
             client.tokenLifetime.map { .integer($0.maxTTLSeconds) } ?? .null])
    }

    /// Every client, by name.
    static func all(on db: SQLiteConnection) throws -> [Client] {
        try db.query("SELECT \(columns) FROM clients ORDER BY name") { try client(from: $0) }
    }

    static func client(named name: String, on db: SQLiteConnection) throws -> Client? {
        try db.query("SELECT \(columns) FROM clients WHERE name = ?", [.text(name)]) { try client(from: $0) }.first
    }

    /// Removes the client and its tokens unless that leaves no admin with a live token (writes
    /// are serialised, so nothing comes between the check and the removal). Whether there was
    /// such a client; errSecParam for the last admin.
    static func remove(named name: String, now: Date, on db: SQLiteConnection) throws -> Bool {
        guard try db.scalarInt("SELECT count(*) FROM clients WHERE name = ?", [.text(name)]) == 1 else { return false }
        if try TokenTable.liveAdminTokens(now: now, excludingClient: name, on: db) == 0,
            try TokenTable.liveAdminTokens(now: now, on: db) > 0
        {
            throw KeychainError.lastAdmin(name)
        }
        try db.execute("DELETE FROM tokens WHERE client = ?", [.text(name)])
        try db.execute("DELETE FROM clients WHERE name = ?", [.text(name)])
        return true
    }

    /// How many clients the table holds.
    static func count(on db: SQLiteConnection) throws -> Int {
        Int(try db.scalarInt("SELECT count(*) FROM clients") ?? 0)
    }

    /// A client from a row of `columns`, starting at column `first`.
    static func client(from row: SQLiteStatement, first: Int32 = 0) throws -> Client {
        try ClientRecord.client(
            name: row.text(first), groupsJSON: row.text(first + 1), role: row.text(first + 2),
            createdMilliseconds: row.int64(first + 3), tokenTTL: row.optionalInt64(first + 4),
            tokenMaxTTL: row.optionalInt64(first + 5))
    }
}
