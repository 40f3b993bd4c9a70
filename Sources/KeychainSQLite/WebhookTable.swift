import Foundation
import KeychainCore
import KeychainStore

/// The webhook tables (migration 7): `webhooks`, each with its key sealed, and
/// `webhook_deliveries`, the outbox. Every statement on them is here; each runs on the connection
/// it is given, inside the caller's transaction when it writes. Holds no key.
enum WebhookTable {
    private static let webhookColumns = "name, url, events, created_time, updated_time"

    private static func webhookRow(_ row: SQLiteStatement) throws -> Webhook {
        try WebhookColumns.webhook(
            name: row.text(0), url: row.text(1), events: row.text(2), created: row.int64(3), updated: row.int64(4))
    }

    static func webhook(named name: String, on db: SQLiteConnection) throws -> Webhook? {
        try db.query("SELECT \(webhookColumns) FROM webhooks WHERE name = ?", [.text(name)], row: webhookRow).first
    }

    static func webhooks(on db: SQLiteConnection) throws -> [Webhook] {
        try db.query("SELECT \(webhookColumns) FROM webhooks ORDER BY name", row: webhookRow)
    }

    /// Inserts or replaces the row (its `created_time` kept); `sealedSecret` nil keeps the stored key.
    static func put(_ webhook: Webhook, sealedSecret: [UInt8]?, on db: SQLiteConnection) throws {
        let values: [SQLiteValue] = [
            .text(webhook.name), .text(webhook.url.text), .text(WebhookColumns.events(webhook.events)),
            .blob(sealedSecret ?? []), .integer(webhook.createdAt.millisecondsSince1970),
            .integer(webhook.updatedAt.millisecondsSince1970),
        ]
        try db.execute(
            """
            INSERT INTO webhooks (name, url, events, secret, created_time, updated_time) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (name) DO UPDATE SET url = excluded.url, events = excluded.events,
                secret = CASE WHEN length(excluded.secret) > 0 THEN excluded.secret ELSE secret END,
                updated_time = excluded.updated_time
            """, values)
    }

    static func remove(named name: String, on db: SQLiteConnection) throws -> Bool {
        try db.execute("DELETE FROM webhook_deliveries WHERE webhook = ?", [.text(name)])
        return try db.execute("DELETE FROM webhooks WHERE name = ?", [.text(name)]) > 0
    }

    // MARK: The outbox

    /// One delivery of `event` per webhook subscribed to its kind, each with a new id, due now.
    static func enqueue(_ event: WebhookEvent, on db: SQLiteConnection) throws {
        let webhooks = try db.query("SELECT name, events FROM webhooks") { (name: $0.text(0), events: $0.text(1)) }
        for name in WebhookColumns.subscribers(of: event.kind, among: webhooks) {
            try db.execute(
                """
                INSERT INTO webhook_deliveries (id, webhook, kind, access_group, service, user_name, connect_id,
                    refresh_state, error, at, attempts, next_attempt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)
                """,
                [
                    .text(WebhookDelivery.newID()), .text(name), .text(event.kind.rawValue), .text(event.accessGroup),
                    .text(event.service), event.user.map { .text($0) } ?? .null, event.connectId.map { .text($0) } ?? .null,
                    event.refreshState.map { .text($0.rawValue) } ?? .null, event.error.map { .text($0) } ?? .null,
                    .integer(event.at.millisecondsSince1970), .integer(event.at.millisecondsSince1970),
                ])
        }
    }

    private static let deliveryColumns = """
        d.id, d.webhook, d.kind, d.access_group, d.service, d.user_name, d.connect_id, d.refresh_state, d.error, d.at,
        d.attempts
        """

    private static func deliveryRow(_ row: SQLiteStatement) throws -> WebhookDelivery {
        WebhookDelivery(
            id: row.text(0), webhook: row.text(1),
            event: try WebhookColumns.event(
                kind: row.text(2), accessGroup: row.text(3), service: row.text(4), user: row.optionalText(5),
                connectId: row.optionalText(6), refreshState: row.optionalText(7), error: row.optionalText(8), at: row.int64(9)),
            attempts: Int(row.int64(10)))
    }

    static func hasDue(at now: Date, on db: SQLiteConnection) throws -> Bool {
        try db.scalarInt(
            "SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE next_attempt <= ?)", [.integer(now.millisecondsSince1970)]) == 1
    }

    /// Up to `limit` deliveries due at `now`, oldest first, moved to `leaseEnd` with their
    /// attempt counted; each with its webhook's URL and sealed key. A row that is no delivery
    /// this release can read (an event kind of a later one, after a roll back) is removed, so
    /// that it cannot hold up the ones behind it.
    static func claim(at now: Date, leaseEnd: Date, limit: Int, on db: SQLiteConnection) throws
        -> [(delivery: WebhookDelivery, url: String, sealedSecret: [UInt8])]
    {
        let due = try db.query(
            """
            SELECT \(deliveryColumns), w.url, w.secret FROM webhook_deliveries d JOIN webhooks w ON w.name = d.webhook
            WHERE d.next_attempt <= ? ORDER BY d.next_attempt, d.at LIMIT ?
            """, [.integer(now.millisecondsSince1970), .integer(Int64(limit))]
        ) { row in (id: row.text(0), delivery: Result { try deliveryRow(row) }, url: row.text(11), sealedSecret: row.blob(12)) }
        var claimed: [(delivery: WebhookDelivery, url: String, sealedSecret: [UInt8])] = []
        for row in due {
            guard case .success(var delivery) = row.delivery else {
                try settle(row.id, retryAt: nil, on: db)
                continue
            }
            try db.execute(
                "UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt = ? WHERE id = ?",
                [.integer(leaseEnd.millisecondsSince1970), .text(row.id)])
            delivery.attempts += 1
            claimed.append((delivery, row.url, row.sealedSecret))
        }
        return claimed
    }

    static func settle(_ id: String, retryAt: Date?, on db: SQLiteConnection) throws {
        if let retryAt {
            try db.execute(
                "UPDATE webhook_deliveries SET next_attempt = ? WHERE id = ?", [.integer(retryAt.millisecondsSince1970), .text(id)])
        } else {
            try db.execute("DELETE FROM webhook_deliveries WHERE id = ?", [.text(id)])
        }
    }

    static func pending(on db: SQLiteConnection) throws -> [WebhookDelivery] {
        try db.query("SELECT \(deliveryColumns) FROM webhook_deliveries d ORDER BY d.at, d.id", row: deliveryRow)
    }

    // MARK: Re-encryption

    private static let secretTerm = "substr(secret, \(SealedBox.termStart), \(SealedBox.termLength))"

    static func countSealed(olderThan term: UInt32, on db: SQLiteConnection) throws -> Int {
        Int(try db.scalarInt("SELECT count(*) FROM webhooks WHERE \(secretTerm) < ?", [.blob(SealedBox.termKey(term))]) ?? 0)
    }

    static func hasSealed(underTerm term: UInt32, on db: SQLiteConnection) throws -> Bool {
        try db.scalarInt(
            "SELECT EXISTS (SELECT 1 FROM webhooks WHERE \(secretTerm) = ?)", [.blob(SealedBox.termKey(term))]) == 1
    }

    /// Up to `limit` keys sealed under a term older than `term`, by webhook name.
    static func sealed(olderThan term: UInt32, limit: Int, on db: SQLiteConnection) throws -> [(name: String, box: [UInt8])] {
        try db.query(
            "SELECT name, secret FROM webhooks WHERE \(secretTerm) < ? LIMIT ?",
            [.blob(SealedBox.termKey(term)), .integer(Int64(limit))]
        ) { (name: $0.text(0), box: $0.blob(1)) }
    }

    static func replaceSecret(of name: String, with box: [UInt8], on db: SQLiteConnection) throws {
        try db.execute("UPDATE webhooks SET secret = ? WHERE name = ?", [.blob(box), .text(name)])
    }
}
