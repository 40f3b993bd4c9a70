import Foundation
import KeychainCore
import KeychainStore

/// The `tokens` table (migration 5): every token's hash (UNIQUE, so a lookup by it walks that
/// index) and record, a client's (`client`) or a login role's (`login_role`, with the groups it
/// granted), and when it was last renewed (`last_renewal`, migration 6; NULL before). Times in
/// milliseconds since 1970.
enum TokenTable {
    private static let columns = "t.accessor, t.client, t.login_role, t.subject, t.access_groups, t.issued, t.expires, t.max_expires, t.ttl, t.last_renewal"
    /// A token's columns, its client's (NULL for a login token) and the stored hash.
    private static let holderQuery = """
        SELECT \(columns), c.name, c.access_groups, c.role, c.created, c.token_ttl, c.token_max_ttl, t.token_hash
        FROM tokens t LEFT JOIN clients c ON c.name = t.client
        """

    static func insert(_ token: NewToken, loginGroups: [String]?, on db: SQLiteConnection) throws {
        let stored = try StoredToken(token.record, loginGroups: loginGroups)
        try db.execute(
            """
            INSERT INTO tokens (accessor, token_hash, client, login_role, subject, access_groups, issued, expires, max_expires, ttl)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.text(stored.accessor), .blob(token.hash), optional(stored.client), optional(stored.loginRole),
             optional(stored.subject), optional(stored.loginGroupsJSON), .integer(stored.issued),
             optional(stored.expires), optional(stored.maxExpires), optional(stored.ttl)])
    }

    /// The holder of the token whose hash is `tokenHash` and the hash as stored, nil when there is none.
    static func holder(forTokenHash tokenHash: [UInt8], on db: SQLiteConnection) throws -> (TokenHolder, storedHash: [UInt8])? {
        try db.query("\(holderQuery) WHERE t.token_hash = ?", [.blob(tokenHash)]) { row in
            try holder(from: row).map { ($0, row.blob(16)) }
        }.first ?? nil
    }

    /// The holder of a token and its hash.
    static func holder(ofAccessor accessor: String, on db: SQLiteConnection) throws -> (TokenHolder, hash: [UInt8])? {
        try db.query("\(holderQuery) WHERE t.accessor = ?", [.text(accessor)]) { row in
            try holder(from: row).map { ($0, row.blob(16)) }
        }.first ?? nil
    }

    /// The tokens of `owner` that have not expired at `now`, oldest first.
    static func live(of owner: TokenOwner, now: Date, on db: SQLiteConnection) throws -> [TokenRecord] {
        let (column, name) = switch owner {
        case .client(let name): ("client", name)
        case .loginRole(let role): ("login_role", role)
        }
        return try db.query(
            "SELECT \(columns) FROM tokens t WHERE t.\(column) = ? AND (t.expires IS NULL OR t.expires > ?) ORDER BY t.issued, t.accessor",
            [.text(name), .integer(now.millisecondsSince1970)]
        ) { try stored(from: $0).record() }
    }

    /// Whether `role` may hold one more token: its stored tokens (counted by the triggers of
    /// migration 5) are under `limit`, or, when they are not, its live ones (expired ones are
    /// stored for an hour). A role with no row (its tokens outlived it) is counted row by row.
    static func loginRoleHasRoom(_ role: String, limit: Int, now: Date, on db: SQLiteConnection) throws -> Bool {
        if let stored = try db.scalarInt("SELECT tokens FROM login_roles WHERE name = ?", [.text(role)]), stored < limit {
            return true
        }
        return try liveCount(ofLoginRole: role, now: now, on: db) < limit
    }

    /// How many tokens `role` issued that have not expired at `now`.
    static func liveCount(ofLoginRole role: String, now: Date, on db: SQLiteConnection) throws -> Int {
        Int(try db.scalarInt(
            "SELECT count(*) FROM tokens WHERE login_role = ? AND (expires IS NULL OR expires > ?)",
            [.text(role), .integer(now.millisecondsSince1970)]) ?? 0)
    }

    /// How many admin clients' tokens have not expired at `now`, leaving out a client's or one token.
    static func liveAdminTokens(
        now: Date, excludingClient client: String? = nil, excludingAccessor accessor: String? = nil, on db: SQLiteConnection
    ) throws -> Int {
        Int(try db.scalarInt(
            """
            SELECT count(*) FROM tokens t JOIN clients c ON c.name = t.client
            WHERE c.role = 'admin' AND (t.expires IS NULL OR t.expires > ?1)
            AND t.client IS NOT ?2 AND t.accessor IS NOT ?3
            """,
            [.integer(now.millisecondsSince1970), optional(client), optional(accessor)]) ?? 0)
    }

    static func adminHasTokenWithoutExpiry(on db: SQLiteConnection) throws -> Bool {
        try db.scalarInt(
            "SELECT count(*) FROM tokens t JOIN clients c ON c.name = t.client WHERE c.role = 'admin' AND t.expires IS NULL"
        ) ?? 0 > 0
    }

    /// Sets a token's expiry and its renewal time; the record after, nil when there is no such token.
    static func renew(accessor: String, expiresAt: Date, now: Date, on db: SQLiteConnection) throws -> TokenRecord? {
        guard try db.execute(
            "UPDATE tokens SET expires = ?, last_renewal = ? WHERE accessor = ?",
            [.integer(expiresAt.millisecondsSince1970), .integer(now.millisecondsSince1970), .text(accessor)]) > 0
        else { return nil }
        return try db.query("SELECT \(columns) FROM tokens t WHERE t.accessor = ?", [.text(accessor)]) {
            try stored(from: $0).record()
        }.first
    }

    /// Revokes one token unless it is the last live admin token; its hash, nil when there was no
    /// such token.
    static func revoke(accessor: String, now: Date, on db: SQLiteConnection) throws -> [UInt8]? {
        guard let (holder, hash) = try holder(ofAccessor: accessor, on: db) else { return nil }
        if holder.client.role == .admin, !holder.token.isExpired(at: now),
            try liveAdminTokens(now: now, excludingAccessor: accessor, on: db) == 0
        {
            throw KeychainError.lastAdmin(holder.client.name)
        }
        return try db.execute("DELETE FROM tokens WHERE accessor = ?", [.text(accessor)]) > 0 ? hash : nil
    }

    static func revokeAll(ofClient name: String, on db: SQLiteConnection) throws -> Int {
        try db.execute("DELETE FROM tokens WHERE client = ?", [.text(name)])
    }

    static func revokeAll(ofLoginRole role: String, on db: SQLiteConnection) throws -> Int {
        try db.execute("DELETE FROM tokens WHERE login_role = ?", [.text(role)])
    }

    /// Every token a login issued (a restore drops them: workloads log in again).
    static func revokeAllLoginTokens(on db: SQLiteConnection) throws -> Int {
        try db.execute("DELETE FROM tokens WHERE login_role IS NOT NULL")
    }

    static func purge(expiredBefore cutoff: Date, on db: SQLiteConnection) throws -> Int {
        try db.execute("DELETE FROM tokens WHERE expires < ?", [.integer(cutoff.millisecondsSince1970)])
    }

    private static func optional(_ text: String?) -> SQLiteValue { text.map { .text($0) } ?? .null }
    private static func optional(_ number: Int64?) -> SQLiteValue { number.map { .integer($0) } ?? .null }

    private static func stored(from row: SQLiteStatement) -> StoredToken {
        StoredToken(
            accessor: row.text(0), client: row.optionalText(1), loginRole: row.optionalText(2), subject: row.optionalText(3),
            loginGroupsJSON: row.optionalText(4), issued: row.int64(5), expires: row.optionalInt64(6),
            maxExpires: row.optionalInt64(7), ttl: row.optionalInt64(8), lastRenewal: row.optionalInt64(9))
    }

    /// A holder from a row of `holderQuery`.
    private static func holder(from row: SQLiteStatement) throws -> TokenHolder? {
        let client = row.isNull(10) ? nil : try ClientTable.client(from: row, first: 10)
        return try stored(from: row).holder(client: client)
    }
}
