/// The `group_usage` table on PostgreSQL (as `GroupUsageTable` on SQLite): per access group, the
/// items it holds and their secrets' bytes, kept by every write transaction.
enum PGGroupUsageTable {
    /// Adds `items` and `secretBytes` (either may be negative) to `group`'s usage in the caller's
    /// transaction; returns its new totals. The row stays locked until the transaction ends, so
    /// the quota check on these totals cannot interleave with another node's write to the group.
    static func add(items: Int64, secretBytes: Int64, to group: String, on db: PGConnection) throws
        -> (items: Int64, secretBytes: Int64)
    {
        let rows = try db.execute(
            """
            INSERT INTO group_usage AS u (access_group, items, secret_bytes) VALUES ($1, $2, $3)
            ON CONFLICT (access_group) DO UPDATE
            SET items = u.items + excluded.items, secret_bytes = u.secret_bytes + excluded.secret_bytes
            RETURNING items, secret_bytes
            """,
            [.text(group), .int8(items), .int8(secretBytes)])
        return rows.count == 1 ? (rows.int64(0, 0), rows.int64(0, 1)) : (0, 0)
    }
}
