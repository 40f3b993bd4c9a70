import KeychainCore

/// The `group_usage` table: per access group, how many items it holds, their secrets' bytes and
/// their attributes' bytes (`GroupQuota`), kept by every write transaction (`GroupUsageChanges`), so a quota check reads
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

    /// Migration 4: attribute bytes (`GroupQuota.attributeBytes`), counted for the items already
    /// stored. A column holds only its attribute's type, so `attributeBytes` is
    /// `AttributeValue.storedBytes` in SQL.
    static func version4() -> String {
        """
        ALTER TABLE group_usage ADD COLUMN attribute_bytes INTEGER NOT NULL DEFAULT 0;
        INSERT INTO group_usage (access_group, items, secret_bytes, attribute_bytes)
            SELECT ifnull("accessGroup", ''), 0, 0, sum(\(attributeBytes)) FROM items WHERE true GROUP BY 1
            ON CONFLICT (access_group) DO UPDATE SET attribute_bytes = excluded.attribute_bytes;
        """
    }

    /// A row's attribute bytes: a text's UTF-8 bytes, a blob's bytes, 8 for an integer.
    static var attributeBytes: String {
        Attribute.all.map { attribute in
            switch attribute.valueType {
            case .string, .enumeration: "ifnull(length(CAST(\(Schema.column(attribute)) AS BLOB)), 0)"
            case .data: "ifnull(length(\(Schema.column(attribute))), 0)"
            case .integer, .bool, .date: "(\(Schema.column(attribute)) IS NOT NULL) * 8"
            }
        }.joined(separator: " + ")
    }

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
