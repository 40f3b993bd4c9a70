import Foundation
import KeychainCore
import KeychainStore

/// The `clients` table: one row per client, its access groups as a JSON array, its token as a
/// hash (UNIQUE, so a lookup by it walks that index).
enum ClientTable {
    static func insert(_ client: Client, tokenHash: [UInt8], on db: SQLiteConnection) throws {
        try db.execute(
            "INSERT INTO clients (name, access_groups, role, created, token_hash) VALUES (?, ?, ?, ?, ?)",
            [.text(client.name), .text(try ClientRecord.encode(client.accessGroups)), .text(client.role.rawValue),
             .integer(client.createdAt.millisecondsSince1970), .blob(tokenHash)])
    }

    /// The client whose token hash is `tokenHash` and the hash as stored, nil when there is none.
    static func client(forTokenHash tokenHash: [UInt8], on db: SQLiteConnection) throws -> (Client, storedHash: [UInt8])? {
        try db.query(
            "SELECT name, access_groups, role, created, token_hash FROM clients WHERE token_hash = ?", [.blob(tokenHash)]
        ) { row in (try client(from: row), row.blob(4)) }.first
    }

    /// Every client, by name.
    static func all(on db: SQLiteConnection) throws -> [Client] {
        try db.query("SELECT name, access_groups, role, created FROM clients ORDER BY name") { try client(from: $0) }
    }

    /// Removes the client unless it is the last admin, in one statement (so no other write can
    /// come between the count and the delete). Whether there was such a client; errSecParam for
    /// the last admin.
    static func remove(named name: String, on db: SQLiteConnection) throws -> Bool {
        let removed = try db.execute(
            """
            DELETE FROM clients WHERE name = ?1
            AND (role <> 'admin' OR (SELECT count(*) FROM clients WHERE role = 'admin') > 1)
            """, [.text(name)])
        if removed > 0 { return true }
        guard try db.scalarInt("SELECT count(*) FROM clients WHERE name = ?", [.text(name)]) == 1 else { return false }
        throw KeychainError.lastAdmin(name)
    }

    /// Whether there was such a client.
    static func replaceTokenHash(ofClient name: String, with tokenHash: [UInt8], on db: SQLiteConnection) throws -> Bool {
        try db.execute("UPDATE clients SET token_hash = ? WHERE name = ?", [.blob(tokenHash), .text(name)]) > 0
    }

    /// How many clients the table holds.
    static func count(on db: SQLiteConnection) throws -> Int {
        Int(try db.scalarInt("SELECT count(*) FROM clients") ?? 0)
    }

    private static func client(from row: SQLiteStatement) throws -> Client {
        try ClientRecord.client(name: row.text(0), groupsJSON: row.text(1), role: row.text(2), createdMilliseconds: row.int64(3))
    }
}
