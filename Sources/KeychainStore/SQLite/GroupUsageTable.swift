import KeychainCore

/// The `group_usage` table: per access group, how many items it holds and their secrets' bytes
/// (`GroupQuota`), kept by every write transaction (`GroupUsageChanges`), so a quota check reads
/// one row instead of counting the group's items.
enum GroupUsageTable {
    /// Migration 3: the table, filled from the items stored (a sealed secret is its plaintext
    /// and `SealedBox.overhead` bytes).
    static func version3() -> String {
        """
        CREATE TABLE group_usage (
            access_group TEXT PRIMARY KEY,
            items INTEGER NOT NULL,
            secret_bytes INTEGER NOT NULL
        ) STRICT;
        INSERT INTO group_usage (access_group, items, secret_bytes)
            SELECT ifnull("accessGroup", ''), count(*), sum(ifnull(length(secret) - \(SealedBox.overhead), 0))
            FROM items GROUP BY 1;
        """
    }

    /// Adds `items` and `secretBytes` (either may be negative) to `group`'s usage; returns its new totals.
    static func add(items: Int64, secretBytes: Int64, to group: String, on db: SQLiteConnection) throws
        -> (items: Int64, secretBytes: Int64)
    {
        let rows = try db.query(
            """
            INSERT INTO group_usage (access_group, items, secret_bytes) VALUES (?, ?, ?)
            ON CONFLICT (access_group) DO UPDATE
            SET items = items + excluded.items, secret_bytes = secret_bytes + excluded.secret_bytes
            RETURNING items, secret_bytes
            """,
            [.text(group), .integer(items), .integer(secretBytes)]
        ) { row in (items: row.int64(0), secretBytes: row.int64(1)) }
        return rows.first ?? (0, 0)
    }

    /// A group's usage (zero for a group that holds nothing).
    static func usage(of group: String, on db: SQLiteConnection) throws -> (items: Int64, secretBytes: Int64) {
        try db.query("SELECT items, secret_bytes FROM group_usage WHERE access_group = ?", [.text(group)]) { row in
            (items: row.int64(0), secretBytes: row.int64(1))
        }.first ?? (0, 0)
    }
}
