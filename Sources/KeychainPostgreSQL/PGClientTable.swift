import Foundation
import KeychainCore
import KeychainStore

/// The `clients` table on PostgreSQL (as `ClientTable` on SQLite): one row per client, its access
/// groups as a JSON array, its tokens' lifetime; its tokens are in `tokens` (`PGTokenTable`).
/// `token_hash` mirrors the client's latest token for older releases in a rolling upgrade
/// (migration 6). Every change bumps `cluster_state.clients_version` in its own transaction, so
/// that other nodes drop the holders they cached (`PGClusterState`).
enum PGClientTable {
    static let columns = "name, access_groups, role, created, token_ttl, token_max_ttl"

    static func insert(_ client: Client, token: NewToken, on db: PGConnection) throws {
        try changing(on: db) { try insertRow(client, token: token, on: db) }
    }

    /// Inserts the client's row and its token in the caller's transaction (initialisation, which
    /// also writes the keyring). The row first without its hash, so that the trigger for older
    /// releases finds the token already in `tokens` when the hash is set.
    static func insertRow(_ client: Client, token: NewToken, on db: PGConnection) throws {
        try db.execute(
            "INSERT INTO clients (\(columns)) VALUES ($1, $2, $3, $4, $5, $6)",
            [.text(client.name), .text(try ClientRecord.encode(client.accessGroups)), .text(client.role.rawValue),
             .int8(client.createdAt.millisecondsSince1970),
             client.tokenLifetime.map { .int8($0.ttlSeconds) } ?? .null,
             client.tokenLifetime.map { .int8($0.maxTTLSeconds) } ?? .null])
        try PGTokenTable.insert(token, loginGroups: nil, on: db)
        try mirrorToken(ofClient: client.name, hash: token.hash, on: db)
    }

    /// Every client, by name (byte order, as SQLite sorts).
    static func all(on db: PGConnection) throws -> [Client] {
        let rows = try db.execute("SELECT \(columns) FROM clients ORDER BY name COLLATE \"C\"")
        return try (0..<rows.count).map { try client(rows, $0) }
    }

    static func client(named name: String, on db: PGConnection) throws -> Client? {
        let rows = try db.execute("SELECT \(columns) FROM clients WHERE name = $1", [.text(name)])
        return rows.count == 1 ? try client(rows, 0) : nil
    }

    /// Removes the client and its tokens unless that leaves no admin with a live token. The
    /// admins' rows are locked first, so two nodes revoking the last two admins at once cannot
    /// both succeed. Whether there was such a client; errSecParam for the last admin.
    static func remove(named name: String, now: Date, on db: PGConnection) throws -> Bool {
        try changing(on: db) {
            try lockAdmins(on: db)
            guard try db.execute("SELECT 1 FROM clients WHERE name = $1", [.text(name)]).count == 1 else { return false }
            if try PGTokenTable.liveAdminTokens(now: now, excludingClient: name, on: db) == 0,
                try PGTokenTable.liveAdminTokens(now: now, on: db) > 0
            {
                throw KeychainError.lastAdmin(name)
            }
            try db.execute("DELETE FROM clients WHERE name = $1", [.text(name)])
            return true
        }
    }

    /// Revokes the client's tokens and stores `token`; whether there was such a client.
    static func replaceToken(ofClient name: String, token: NewToken, on db: PGConnection) throws -> Bool {
        try changing(on: db) {
            guard try db.execute("SELECT 1 FROM clients WHERE name = $1 FOR UPDATE", [.text(name)]).count == 1 else {
                return false
            }
            try db.execute("DELETE FROM tokens WHERE client = $1", [.text(name)])
            try PGTokenTable.insert(token, loginGroups: nil, on: db)
            try mirrorToken(ofClient: name, hash: token.hash, on: db)
            return true
        }
    }

    /// Locks the admin clients' rows until the transaction ends: every check that an admin keeps
    /// a live token takes this first.
    static func lockAdmins(on db: PGConnection) throws {
        try db.execute("SELECT name FROM clients WHERE role = 'admin' FOR UPDATE")
    }

    /// Sets the hash older releases authenticate the client by (nil: the token was revoked).
    static func mirrorToken(ofClient name: String, hash: [UInt8]?, on db: PGConnection) throws {
        try db.execute("UPDATE clients SET token_hash = $1 WHERE name = $2", [hash.map { .bytea($0) } ?? .null, .text(name)])
    }

    /// Runs a change in one transaction that also bumps the clients' version and wakes the other nodes.
    static func changing<T>(on db: PGConnection, _ body: () throws -> T) throws -> T {
        try db.transaction {
            let result = try body()
            try PGClusterState.bump(.clients, on: db)
            return result
        }
    }

    /// A client from a row of `columns`, starting at column `first`.
    static func client(_ rows: PGRows, _ row: Int, first: Int = 0) throws -> Client {
        try ClientRecord.client(
            name: rows.text(row, first), groupsJSON: rows.text(row, first + 1), role: rows.text(row, first + 2),
            createdMilliseconds: rows.int64(row, first + 3), tokenTTL: rows.optionalInt64(row, first + 4),
            tokenMaxTTL: rows.optionalInt64(row, first + 5))
    }
}
