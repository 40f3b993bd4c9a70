public import Foundation
public import KeychainCore
import KeychainStore

/// Webhooks on one node: written on the writer connection, outside the group commit (admin
/// writes and the delivery worker's, a few a second at most); deliveries are enqueued by the
/// item transactions (`SQLiteItemTransaction.recordWebhookEvent`).
extension SQLiteItemStore: WebhookStore {
    public func putWebhook(_ webhook: Webhook, secret: SecretBytes, replacingSecret: Bool) throws
        -> (stored: Webhook, secretStored: Bool)
    {
        try StoreErrors.map { try keyring.withKeys {
            try pool.write { db in
                try keyring.transaction(on: db) {
                    let existing = try WebhookTable.webhook(named: webhook.name, on: db)
                    var stored = webhook
                    stored.createdAt = existing?.createdAt ?? webhook.createdAt
                    let storesSecret = replacingSecret || existing == nil
                    var sealed: [UInt8]?
                    if storesSecret {
                        try keyring.prepareForSealing(1, on: db)
                        sealed = try keyring.seal(secret, binding: .webhookSecret(webhook.name), on: db)
                    }
                    try WebhookTable.put(stored, sealedSecret: sealed, on: db)
                    return (stored, storesSecret)
                }
            }
        } }
    }

    public func webhook(named name: String) throws -> Webhook? {
        try StoreErrors.map { try pool.read { db in try WebhookTable.webhook(named: name, on: db) } }
    }

    public func webhooks() throws -> [Webhook] {
        try StoreErrors.map { try pool.read { db in try WebhookTable.webhooks(on: db) } }
    }

    public func removeWebhook(named name: String) throws -> Bool {
        try StoreErrors.map { try pool.write { db in try db.transaction { try WebhookTable.remove(named: name, on: db) } } }
    }

    /// Looks on a reader first: a write, even one that changes nothing, ends every thread's find
    /// cache, and the delivery thread asks every second.
    public func claimDeliveries(at now: Date, lease: TimeInterval, limit: Int) throws -> [ClaimedDelivery] {
        try StoreErrors.map { try keyring.withKeys {
            guard try pool.read({ db in try WebhookTable.hasDue(at: now, on: db) }) else { return [] }
            let claimed = try pool.write { db in
                try db.transaction {
                    try WebhookTable.claim(at: now, leaseEnd: now.addingTimeInterval(lease), limit: limit, on: db)
                }
            }
            return try claimed.map { claimed in
                ClaimedDelivery(
                    delivery: claimed.delivery, url: try TokenEndpointURL(claimed.url, key: "url"),
                    signer: try keyring.webhookSigner(opening: claimed.sealedSecret, webhook: claimed.delivery.webhook))
            }
        } }
    }

    public func settleDelivery(_ id: String, retryAt: Date?) throws {
        try StoreErrors.map { try pool.write { db in try WebhookTable.settle(id, retryAt: retryAt, on: db) } }
    }

    public func pendingDeliveries() throws -> [WebhookDelivery] {
        try StoreErrors.map { try pool.read { db in try WebhookTable.pending(on: db) } }
    }
}
