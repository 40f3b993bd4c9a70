import Foundation
import KeychainCore
import KeychainStore

/// The `tokens` table on PostgreSQL (migration 6), as `TokenTable` on SQLite: every token's hash
/// (UNIQUE) and record, its last renewal (`last_renewal`, migration 7). A client's token goes
/// with its client (foreign key, ON DELETE CASCADE).
enum PGTokenTable {
    private static let columns = "t.accessor, t.client, t.login_role, t.subject, t.access_groups, t.issued, t.expires, t.max_expires, t.ttl, t.last_renewal"
    private static let holderQuery = """
        SELECT \(columns), c.name, c.access_groups, c.role, c.created, c.token_ttl, c.token_max_ttl, t.token_hash
        FROM tokens t LEFT JOIN clients c ON c.name = t.client
        """

    static func insert(_ token: NewToken, loginGroups: [String]?, on db: PGConnection) throws {
        let stored = try StoredToken(token.record, loginGroups: loginGroups)
        try db.execute(
            """
            INSERT INTO tokens (accessor, token_hash, client, login_role, subject, access_groups, issued, expires, max_expires, ttl)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            """,
            [.text(stored.accessor), .bytea(token.hash), optional(stored.client), optional(stored.loginRole),
             optional(stored.subject), optional(stored.loginGroupsJSON), .int8(stored.issued),
             optional(stored.expires), optional(stored.maxExpires), optional(stored.ttl)])
    }

    static func holder(forTokenHash tokenHash: [UInt8], on db: PGConnection) throws -> (TokenHolder, storedHash: [UInt8])? {
        let rows = try db.execute("\(holderQuery) WHERE t.token_hash = $1", [.bytea(tokenHash)])
        guard rows.count == 1, let holder = try holder(rows, 0) else { return nil }
        return (holder, rows.bytes(0, 16))
    }

    /// The holder of a token and its hash.
    static func holder(ofAccessor accessor: String, on db: PGConnection) throws -> (TokenHolder, hash: [UInt8])? {
        let rows = try db.execute("\(holderQuery) WHERE t.accessor = $1", [.text(accessor)])
        guard rows.count == 1, let holder = try holder(rows, 0) else { return nil }
        return (holder, rows.bytes(0, 16))
    }

    static func live(of owner: TokenOwner, now: Date, on db: PGConnection) throws -> [TokenRecord] {
        let (column, name) = switch owner {
        case .client(let name): ("client", name)
        case .loginRole(let role): ("login_role", role)
        }
        let rows = try db.execute(
            """
            SELECT \(columns) FROM tokens t WHERE t.\(column) = $1 AND (t.expires IS NULL OR t.expires > $2)
            ORDER BY t.issued, t.accessor COLLATE "C"
            """, [.text(name), .int8(now.millisecondsSince1970)])
        return try (0..<rows.count).map { try stored(rows, $0).record() }
    }

    /// Whether `role` may hold one more token, as on SQLite (`TokenTable.loginRoleHasRoom`); its
    /// row stays locked until the caller's transaction ends, so logins on several nodes at once
    /// cannot pass the bound together.
    static func loginRoleHasRoom(_ role: String, limit: Int, now: Date, on db: PGConnection) throws -> Bool {
        let rows = try db.execute("SELECT tokens FROM login_roles WHERE name = $1 FOR UPDATE", [.text(role)])
        if rows.count == 1, rows.int64(0, 0) < Int64(limit) { return true }
        return try liveCount(ofLoginRole: role, now: now, on: db) < limit
    }

    /// How many tokens `role` issued that have not expired at `now`.
    static func liveCount(ofLoginRole role: String, now: Date, on db: PGConnection) throws -> Int {
        Int(try db.execute(
            "SELECT count(*) FROM tokens WHERE login_role = $1 AND (expires IS NULL OR expires > $2)",
            [.text(role), .int8(now.millisecondsSince1970)]
        ).int64(0, 0))
    }

    static func liveAdminTokens(
        now: Date, excludingClient client: String? = nil, excludingAccessor accessor: String? = nil, on db: PGConnection
    ) throws -> Int {
        Int(try db.execute(
            """
            SELECT count(*) FROM tokens t JOIN clients c ON c.name = t.client
            WHERE c.role = 'admin' AND (t.expires IS NULL OR t.expires > $1)
            AND t.client IS DISTINCT FROM $2 AND t.accessor IS DISTINCT FROM $3
            """, [.int8(now.millisecondsSince1970), optional(client), optional(accessor)]
        ).int64(0, 0))
    }

    static func adminHasTokenWithoutExpiry(on db: PGConnection) throws -> Bool {
        try db.execute(
            "SELECT 1 FROM tokens t JOIN clients c ON c.name = t.client WHERE c.role = 'admin' AND t.expires IS NULL LIMIT 1"
        ).count == 1
    }

    static func renew(accessor: String, expiresAt: Date, now: Date, on db: PGConnection) throws -> TokenRecord? {
        let rows = try db.execute(
            "UPDATE tokens t SET expires = $1, last_renewal = $2 WHERE accessor = $3 RETURNING \(columns)",
            [.int8(expiresAt.millisecondsSince1970), .int8(now.millisecondsSince1970), .text(accessor)])
        return rows.count == 1 ? try stored(rows, 0).record() : nil
    }

    /// Revokes one token unless it is the last live admin token; its hash, nil when there was
    /// no such token. In the caller's transaction, which announces the revocation.
    static func revoke(accessor: String, now: Date, on db: PGConnection) throws -> [UInt8]? {
        guard let (holder, hash) = try holder(ofAccessor: accessor, on: db) else { return nil }
        if holder.client.role == .admin, case .client(let name) = holder.token.source {
            try PGClientTable.lockAdmins(on: db)
            if !holder.token.isExpired(at: now), try liveAdminTokens(now: now, excludingAccessor: accessor, on: db) == 0 {
                throw KeychainError.lastAdmin(name)
            }
        }
        guard try db.execute("DELETE FROM tokens WHERE accessor = $1", [.text(accessor)]).affectedRows == 1 else { return nil }
        if case .client(let name) = holder.token.source {
            try db.execute("UPDATE clients SET token_hash = NULL WHERE name = $1 AND token_hash = $2", [.text(name), .bytea(hash)])
        }
        return hash
    }

    static func revokeAll(ofLoginRole role: String, on db: PGConnection) throws -> Int {
        try db.execute("DELETE FROM tokens WHERE login_role = $1", [.text(role)]).affectedRows
    }

    static func purge(expiredBefore cutoff: Date, on db: PGConnection) throws -> Int {
        try db.execute("DELETE FROM tokens WHERE expires < $1", [.int8(cutoff.millisecondsSince1970)]).affectedRows
    }

    private static func optional(_ text: String?) -> PGValue { text.map { .text($0) } ?? .null }
    private static func optional(_ number: Int64?) -> PGValue { number.map { .int8($0) } ?? .null }

    private static func stored(_ rows: PGRows, _ row: Int) -> StoredToken {
        StoredToken(
            accessor: rows.text(row, 0), client: rows.optionalText(row, 1), loginRole: rows.optionalText(row, 2),
            subject: rows.optionalText(row, 3), loginGroupsJSON: rows.optionalText(row, 4), issued: rows.int64(row, 5),
            expires: rows.optionalInt64(row, 6), maxExpires: rows.optionalInt64(row, 7), ttl: rows.optionalInt64(row, 8),
            lastRenewal: rows.optionalInt64(row, 9))
    }

    private static func holder(_ rows: PGRows, _ row: Int) throws -> TokenHolder? {
        let client = rows.isNull(row, 10) ? nil : try PGClientTable.client(rows, row, first: 10)
        return try stored(rows, row).holder(client: client)
    }
}
