import Foundation
import KeychainCore
import KeychainStore

/// Webhooks shared by every node: any node's worker claims due deliveries (`FOR UPDATE SKIP
/// LOCKED`, then a lease), so each attempt of an event is made by one node, with the id it was
/// enqueued with; deliveries are enqueued by the item transactions (`PGItemTransaction.recordWebhookEvent`).
extension PGItemStore: WebhookStore {
    func putWebhook(_ webhook: Webhook, secret: SecretBytes, replacingSecret: Bool) throws -> (stored: Webhook, secretStored: Bool) {
        try StoreErrors.map { try keyring.withKeys {
            try connections.withConnection { db in
                try db.transaction {
                    let existing = try PGWebhookTable.webhook(named: webhook.name, forUpdate: true, on: db)
                    var stored = webhook
                    stored.createdAt = existing?.createdAt ?? webhook.createdAt
                    let storesSecret = replacingSecret || existing == nil
                    let sealed = storesSecret
                        ? try keyring.seal(secret, binding: .webhookSecret(webhook.name), reservingFrom: reservations) : nil
                    try PGWebhookTable.put(stored, sealedSecret: sealed, on: db)
                    return (stored, storesSecret)
                }
            }
        } }
    }

    func webhook(named name: String) throws -> Webhook? {
        try StoreErrors.map { try connections.withConnection { db in try PGWebhookTable.webhook(named: name, on: db) } }
    }

    func webhooks() throws -> [Webhook] {
        try StoreErrors.map { try connections.withConnection { db in try PGWebhookTable.webhooks(on: db) } }
    }

    func removeWebhook(named name: String) throws -> Bool {
        try StoreErrors.map { try connections.withConnection { db in try PGWebhookTable.remove(named: name, on: db) } }
    }

    func claimDeliveries(at now: Date, lease: TimeInterval, limit: Int) throws -> [ClaimedDelivery] {
        try StoreErrors.map { try keyring.withKeys {
            let claimed = try connections.withConnection { db in
                try PGWebhookTable.claim(at: now, leaseEnd: now.addingTimeInterval(lease), limit: limit, on: db)
            }
            return try claimed.map { claimed in
                ClaimedDelivery(
                    delivery: claimed.delivery, url: try TokenEndpointURL(claimed.url, key: "url"),
                    signer: try keyring.webhookSigner(opening: claimed.sealedSecret, webhook: claimed.delivery.webhook))
            }
        } }
    }

    func settleDelivery(_ id: String, retryAt: Date?) throws {
        try StoreErrors.map { try connections.withConnection { db in try PGWebhookTable.settle(id, retryAt: retryAt, on: db) } }
    }

    func pendingDeliveries() throws -> [WebhookDelivery] {
        try StoreErrors.map { try connections.withConnection { db in try PGWebhookTable.pending(on: db) } }
    }
}
