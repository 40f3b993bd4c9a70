import Foundation
import KeychainCore
import KeychainStore

/// The webhook tables on PostgreSQL (migration 8), as on SQLite (`WebhookTable`). Holds no key.
enum PGWebhookTable {
    private static let webhookColumns = "name, url, events, created_time, updated_time"

    private static func webhooks(_ rows: PGRows) throws -> [Webhook] {
        try (0..<rows.count).map { row in
            try WebhookColumns.webhook(
                name: rows.text(row, 0), url: rows.text(row, 1), events: rows.text(row, 2), created: rows.int64(row, 3),
                updated: rows.int64(row, 4))
        }
    }

    static func webhook(named name: String, forUpdate: Bool = false, on db: PGConnection) throws -> Webhook? {
        try webhooks(
            db.execute("SELECT \(webhookColumns) FROM webhooks WHERE name = $1\(forUpdate ? " FOR UPDATE" : "")", [.text(name)])
        ).first
    }

    static func webhooks(on db: PGConnection) throws -> [Webhook] {
        try webhooks(db.execute("SELECT \(webhookColumns) FROM webhooks ORDER BY name"))
    }

    /// Inserts or replaces the row (its `created_time` kept); `sealedSecret` nil keeps the stored key.
    static func put(_ webhook: Webhook, sealedSecret: [UInt8]?, on db: PGConnection) throws {
        try db.execute(
            """
            INSERT INTO webhooks (name, url, events, secret, created_time, updated_time) VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (name) DO UPDATE SET url = excluded.url, events = excluded.events,
                secret = CASE WHEN length(excluded.secret) > 0 THEN excluded.secret ELSE webhooks.secret END,
                updated_time = excluded.updated_time
            """,
            [
                .text(webhook.name), .text(webhook.url.text), .text(WebhookColumns.events(webhook.events)),
                .bytea(sealedSecret ?? []), .int8(webhook.createdAt.millisecondsSince1970),
                .int8(webhook.updatedAt.millisecondsSince1970),
            ])
    }

    /// Its deliveries go with it (ON DELETE CASCADE).
    static func remove(named name: String, on db: PGConnection) throws -> Bool {
        try db.execute("DELETE FROM webhooks WHERE name = $1", [.text(name)]).affectedRows > 0
    }

    // MARK: The outbox

    /// One delivery of `event` per webhook subscribed to its kind, each with a new id, due now.
    /// The webhooks read are held (FOR KEY SHARE) until commit: a removal waits, then takes these
    /// deliveries with it, rather than failing this transaction's insert.
    static func enqueue(_ event: WebhookEvent, on db: PGConnection) throws {
        let rows = try db.execute("SELECT name, events FROM webhooks FOR KEY SHARE")
        let webhooks = (0..<rows.count).map { (name: rows.text($0, 0), events: rows.text($0, 1)) }
        for name in WebhookColumns.subscribers(of: event.kind, among: webhooks) {
            try db.execute(
                """
                INSERT INTO webhook_deliveries (id, webhook, kind, access_group, service, user_name, connect_id,
                    refresh_state, error, at, attempts, next_attempt)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0, $10)
                """,
                [
                    .text(WebhookDelivery.newID()), .text(name), .text(event.kind.rawValue), .text(event.accessGroup),
                    .text(event.service), event.user.map { .text($0) } ?? .null, event.connectId.map { .text($0) } ?? .null,
                    event.refreshState.map { .text($0.rawValue) } ?? .null, event.error.map { .text($0) } ?? .null,
                    .int8(event.at.millisecondsSince1970),
                ])
        }
    }

    private static let deliveryColumns = """
        d.id, d.webhook, d.kind, d.access_group, d.service, d.user_name, d.connect_id, d.refresh_state, d.error, d.at,
        d.attempts
        """

    private static func delivery(_ rows: PGRows, _ row: Int) throws -> WebhookDelivery {
        WebhookDelivery(
            id: rows.text(row, 0), webhook: rows.text(row, 1),
            event: try WebhookColumns.event(
                kind: rows.text(row, 2), accessGroup: rows.text(row, 3), service: rows.text(row, 4),
                user: rows.optionalText(row, 5), connectId: rows.optionalText(row, 6), refreshState: rows.optionalText(row, 7),
                error: rows.optionalText(row, 8), at: rows.int64(row, 9)),
            attempts: Int(rows.int64(row, 10)))
    }

    /// Up to `limit` deliveries due at `now`, oldest first, moved to `leaseEnd` with their attempt
    /// counted, in one statement: rows another node is claiming are skipped, not waited for. A row
    /// that is no delivery this release can read is removed, as on SQLite.
    static func claim(at now: Date, leaseEnd: Date, limit: Int, on db: PGConnection) throws
        -> [(delivery: WebhookDelivery, url: String, sealedSecret: [UInt8])]
    {
        let rows = try db.execute(
            """
            UPDATE webhook_deliveries d SET attempts = d.attempts + 1, next_attempt = $2
            FROM webhooks w
            WHERE w.name = d.webhook AND d.id IN (
                SELECT id FROM webhook_deliveries WHERE next_attempt <= $1 ORDER BY next_attempt, at LIMIT $3
                FOR UPDATE SKIP LOCKED)
            RETURNING \(deliveryColumns), w.url, w.secret
            """,
            [.int8(now.millisecondsSince1970), .int8(leaseEnd.millisecondsSince1970), .int8(Int64(limit))])
        var claimed: [(delivery: WebhookDelivery, url: String, sealedSecret: [UInt8])] = []
        for row in 0..<rows.count {
            guard let delivery = try? delivery(rows, row) else {
                // No delivery this release can read (an event kind of a later one): it would come back forever.
                try settle(rows.text(row, 0), retryAt: nil, on: db)
                continue
            }
            claimed.append((delivery, rows.text(row, 11), rows.bytes(row, 12)))
        }
        return claimed.sorted { ($0.delivery.event.at, $0.delivery.id) < ($1.delivery.event.at, $1.delivery.id) }
    }

    static func settle(_ id: String, retryAt: Date?, on db: PGConnection) throws {
        if let retryAt {
            try db.execute(
                "UPDATE webhook_deliveries SET next_attempt = $1 WHERE id = $2", [.int8(retryAt.millisecondsSince1970), .text(id)])
        } else {
            try db.execute("DELETE FROM webhook_deliveries WHERE id = $1", [.text(id)])
        }
    }

    static func pending(on db: PGConnection) throws -> [WebhookDelivery] {
        let rows = try db.execute("SELECT \(deliveryColumns) FROM webhook_deliveries d ORDER BY d.at, d.id COLLATE \"C\"")
        return try (0..<rows.count).map { try delivery(rows, $0) }
    }

    // MARK: Re-encryption

    private static let secretTerm = "substring(secret FROM \(SealedBox.termStart) FOR \(SealedBox.termLength))"

    static func countSealed(olderThan term: UInt32, on db: PGConnection) throws -> Int {
        Int(try db.execute("SELECT count(*) FROM webhooks WHERE \(secretTerm) < $1", [.bytea(SealedBox.termKey(term))]).int64(0, 0))
    }

    static func hasSealed(underTerm term: UInt32, on db: PGConnection) throws -> Bool {
        try db.execute("SELECT 1 FROM webhooks WHERE \(secretTerm) = $1 LIMIT 1", [.bytea(SealedBox.termKey(term))]).count > 0
    }

    /// Up to `limit` keys sealed under a term older than `term`, locked until the transaction ends.
    static func sealed(olderThan term: UInt32, limit: Int, on db: PGConnection) throws -> [(name: String, box: [UInt8])] {
        let rows = try db.execute(
            "SELECT name, secret FROM webhooks WHERE \(secretTerm) < $1 LIMIT $2 FOR UPDATE",
            [.bytea(SealedBox.termKey(term)), .int8(Int64(limit))])
        return (0..<rows.count).map { (name: rows.text($0, 0), box: rows.bytes($0, 1)) }
    }

    static func replaceSecret(of name: String, with box: [UInt8], on db: PGConnection) throws {
        try db.execute("UPDATE webhooks SET secret = $1 WHERE name = $2", [.bytea(box), .text(name)])
    }
}
