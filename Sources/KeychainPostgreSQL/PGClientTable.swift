import Foundation
import KeychainCore
import KeychainStore

/// The `clients` table on PostgreSQL (as `ClientTable` on SQLite): one row per client, its access
/// groups as a JSON array, its token as a hash (UNIQUE). Every change bumps
/// `cluster_state.clients_version` in its own transaction, so that other nodes drop the clients
/// they cached (`PGClusterState`).
enum PGClientTable {
    static func insert(_ client: Client, tokenHash: [UInt8], on db: PGConnection) throws {
        try changing(on: db) { try insertRow(client, tokenHash: tokenHash, on: db) }
    }

    /// Inserts the client's row in the caller's transaction (initialisation, which also writes the keyring).
    static func insertRow(_ client: Client, tokenHash: [UInt8], on db: PGConnection) throws {
        try db.execute(
            "INSERT INTO clients (name, access_groups, role, created, token_hash) VALUES ($1, $2, $3, $4, $5)",
            [.text(client.name), .text(try ClientRecord.encode(client.accessGroups)), .text(client.role.rawValue),
             .int8(client.createdAt.millisecondsSince1970), .bytea(tokenHash)])
    }

    /// The client whose token hash is `tokenHash` and the hash as stored, nil when there is none.
    static func client(forTokenHash tokenHash: [UInt8], on db: PGConnection) throws -> (Client, storedHash: [UInt8])? {
        let rows = try db.execute(
            "SELECT name, access_groups, role, created, token_hash FROM clients WHERE token_hash = $1", [.bytea(tokenHash)])
        guard rows.count == 1 else { return nil }
        return (try client(rows, 0), rows.bytes(0, 4))
    }

    /// Every client, by name (byte order, as SQLite sorts).
    static func all(on db: PGConnection) throws -> [Client] {
        let rows = try db.execute("SELECT name, access_groups, role, created FROM clients ORDER BY name COLLATE \"C\"")
        return try (0..<rows.count).map { try client(rows, $0) }
    }

    /// Removes the client unless it is the last admin. The admins' rows are locked first, so two
    /// nodes revoking the last two admins at once cannot both succeed. Whether there was such a
    /// client; errSecParam for the last admin.
    static func remove(named name: String, on db: PGConnection) throws -> Bool {
        try changing(on: db) {
            let admins = try db.execute("SELECT name FROM clients WHERE role = 'admin' FOR UPDATE").count
            let removed = try db.execute(
                "DELETE FROM clients WHERE name = $1 AND (role <> 'admin' OR $2 > 1)", [.text(name), .int8(Int64(admins))]
            ).affectedRows
            if removed > 0 { return true }
            guard try db.execute("SELECT 1 FROM clients WHERE name = $1", [.text(name)]).count == 1 else { return false }
            throw KeychainError.lastAdmin(name)
        }
    }

    /// Whether there was such a client.
    static func replaceTokenHash(ofClient name: String, with tokenHash: [UInt8], on db: PGConnection) throws -> Bool {
        try changing(on: db) {
            try db.execute("UPDATE clients SET token_hash = $1 WHERE name = $2", [.bytea(tokenHash), .text(name)])
                .affectedRows > 0
        }
    }

    /// Runs a change in one transaction that also bumps the clients' version and wakes the other nodes.
    private static func changing<T>(on db: PGConnection, _ body: () throws -> T) throws -> T {
        try db.transaction {
            let result = try body()
            try PGClusterState.bump(.clients, on: db)
            return result
        }
    }

    private static func client(_ rows: PGRows, _ row: Int) throws -> Client {
        try ClientRecord.client(
            name: rows.text(row, 0), groupsJSON: rows.text(row, 1), role: rows.text(row, 2),
            createdMilliseconds: rows.int64(row, 3))
    }
}
