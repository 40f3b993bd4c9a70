import KeychainCore
import KeychainStore

/// The `group_usage` table on PostgreSQL (as `GroupUsageTable` on SQLite): per access group, the
/// items it holds and their secrets' and attributes' bytes, kept by every write transaction, in `shards` rows per
/// group. A write adds to its connection's shard only, so writes to one group from several
/// connections and nodes do not queue on one row until each commits; the totals are the sum.
///
/// Far from a quota that sum is read without waiting: writes in flight elsewhere are not in it,
/// which cannot matter while the total stays `margin` below the bound (more writes than that to
/// one group would have to be in flight at once). Near the bound every write to the group takes
/// the group's advisory lock until it commits and counts again, so the check is exact there.
enum PGGroupUsageTable {
    static let shards = 16

    /// How far below a quota the sum is trusted without the lock.
    static let margin = GroupUsage(items: 1024, secretBytes: 256 << 20, attributeBytes: 256 << 20)

    /// Adds `change` (any part may be negative) to `group`'s usage in the caller's transaction;
    /// returns its new totals, exact when they come within `margin` of `quota`.
    static func add(_ change: GroupUsage, to group: String, quota: GroupQuota, on db: PGConnection) throws -> GroupUsage {
        // The CTE's insert is not seen by the outer query's snapshot: the other shards' sum is
        // added to the row it returns. `sum(bigint)` is numeric: cast back, as rows are read binary.
        let rows = try db.execute(
            """
            WITH own AS (
                INSERT INTO group_usage AS u (access_group, shard, items, secret_bytes, attribute_bytes)
                VALUES ($1, pg_backend_pid() % \(shards), $2, $3, $4)
                ON CONFLICT (access_group, shard) DO UPDATE
                SET items = u.items + excluded.items, secret_bytes = u.secret_bytes + excluded.secret_bytes,
                    attribute_bytes = u.attribute_bytes + excluded.attribute_bytes
                RETURNING shard, items, secret_bytes, attribute_bytes
            )
            SELECT (own.items + coalesce(sum(g.items), 0))::bigint, (own.secret_bytes + coalesce(sum(g.secret_bytes), 0))::bigint,
                (own.attribute_bytes + coalesce(sum(g.attribute_bytes), 0))::bigint
            FROM own LEFT JOIN group_usage g ON g.access_group = $1 AND g.shard <> own.shard
            GROUP BY own.items, own.secret_bytes, own.attribute_bytes
            """,
            [.text(group), .int8(change.items), .int8(change.secretBytes), .int8(change.attributeBytes)])
        let totals = rows.count == 1 ? Self.usage(rows) : .zero
        let growing = change.items > 0 || change.secretBytes > 0 || change.attributeBytes > 0
        let near =
            quota.items.map { totals.items > Int64($0) - margin.items } == true
            || quota.secretBytes.map { totals.secretBytes > Int64($0) - margin.secretBytes } == true
            || quota.attributeBytes.map { totals.attributeBytes > Int64($0) - margin.attributeBytes } == true
        guard growing, near else { return totals }
        try db.execute("SELECT pg_advisory_xact_lock(hashtext('keychaind:quota'), hashtext($1))", [.text(group)])
        return Self.usage(
            try db.execute(
                """
                SELECT coalesce(sum(items), 0)::bigint, coalesce(sum(secret_bytes), 0)::bigint,
                    coalesce(sum(attribute_bytes), 0)::bigint
                FROM group_usage WHERE access_group = $1
                """,
                [.text(group)]))
    }

    /// The usage in the first row of `rows` (items, secret bytes, attribute bytes).
    private static func usage(_ rows: PGRows) -> GroupUsage {
        GroupUsage(items: rows.int64(0, 0), secretBytes: rows.int64(0, 1), attributeBytes: rows.int64(0, 2))
    }
}
