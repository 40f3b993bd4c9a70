public import Foundation

/// Where webhooks and their pending deliveries are kept (both backends; `InMemoryWebhookStore`
/// for tests; `WebhookStoreConformance`). Deliveries are enqueued by `WebhookEventRecording`
/// inside item transactions; this protocol hands them out and settles them.
public protocol WebhookStore: Sendable {
    /// Stores `webhook` (replacing one of the same name, its `createdAt` kept). `secret`: the key
    /// to sign with; `replacingSecret` false keeps a stored webhook's key and uses `secret` only
    /// when there is none. Returns the webhook as stored and whether `secret` was stored.
    func putWebhook(_ webhook: Webhook, secret: SecretBytes, replacingSecret: Bool) throws -> (stored: Webhook, secretStored: Bool)
    func webhook(named name: String) throws -> Webhook?
    /// Every webhook, by name.
    func webhooks() throws -> [Webhook]
    /// Removes a webhook and its pending deliveries; false when there is none of that name.
    func removeWebhook(named name: String) throws -> Bool

    /// Claims up to `limit` deliveries due at `now` (oldest first) for one attempt each: their
    /// attempts counted and their next attempt moved to `now + lease`, so that no other node
    /// takes them meanwhile; one that is not settled within the lease is claimed again.
    func claimDeliveries(at now: Date, lease: TimeInterval, limit: Int) throws -> [ClaimedDelivery]
    /// Settles a claimed delivery: `retryAt` nil removes it (delivered, or given up); else it is
    /// due again then.
    func settleDelivery(_ id: String, retryAt: Date?) throws
    /// Pending deliveries (metrics, tests).
    func pendingDeliveries() throws -> [WebhookDelivery]
}

/// A delivery claimed for one attempt, with what sending it needs.
public struct ClaimedDelivery: Sendable {
    public var delivery: WebhookDelivery
    public var url: TokenEndpointURL
    /// HMAC-SHA256 under the webhook's secret; the key itself never leaves the store.
    public var signer: any WebhookSigner

    public init(delivery: WebhookDelivery, url: TokenEndpointURL, signer: any WebhookSigner) {
        self.delivery = delivery
        self.url = url
        self.signer = signer
    }
}

/// Signs with a webhook's secret (HMAC-SHA256).
public protocol WebhookSigner: Sendable {
    func signature(of message: [UInt8]) -> [UInt8]
}
