import KeychainCore
import KeychainStore

/// The `group_usage` table (migrations 3 and 4): per access group, how many items it holds, their
/// secrets' bytes and their attributes' bytes (`GroupQuota`), kept by every write transaction
/// (`GroupUsageChanges`), so a quota check reads one row instead of counting the group's items.
enum GroupUsageTable {
    /// Adds `change` (any part may be negative) to `group`'s usage; returns its new totals.
    static func add(_ change: GroupUsage, to group: String, on db: SQLiteConnection) throws -> GroupUsage {
        let rows = try db.query(
            """
            INSERT INTO group_usage (access_group, items, secret_bytes, attribute_bytes) VALUES (?, ?, ?, ?)
            ON CONFLICT (access_group) DO UPDATE
            SET items = items + excluded.items, secret_bytes = secret_bytes + excluded.secret_bytes,
                attribute_bytes = attribute_bytes + excluded.attribute_bytes
            RETURNING items, secret_bytes, attribute_bytes
            """,
            [.text(group), .integer(change.items), .integer(change.secretBytes), .integer(change.attributeBytes)]
        ) { row in GroupUsage(items: row.int64(0), secretBytes: row.int64(1), attributeBytes: row.int64(2)) }
        return rows.first ?? .zero
    }

    /// A group's usage (zero for a group that holds nothing).
    static func usage(of group: String, on db: SQLiteConnection) throws -> GroupUsage {
        try db.query(
            "SELECT items, secret_bytes, attribute_bytes FROM group_usage WHERE access_group = ?", [.text(group)]
        ) { row in
            GroupUsage(items: row.int64(0), secretBytes: row.int64(1), attributeBytes: row.int64(2))
        }.first ?? .zero
    }
}
