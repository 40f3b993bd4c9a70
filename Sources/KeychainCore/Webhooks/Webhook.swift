public import Foundation

/// A webhook (`PUT /v1/admin/webhooks/{name}`): where events of the kinds it subscribes to are
/// POSTed, signed with its secret. The secret is not part of this value: it is sealed in
/// storage, given only when it is stored (`WebhookStore.putWebhook`) and used only to sign
/// (`ClaimedDelivery.signer`).
public struct Webhook: Sendable, Equatable {
    public var name: String
    /// Called under the outbound rules of token endpoints: https, or http to loopback.
    public var url: TokenEndpointURL
    /// Never empty.
    public var events: [WebhookEvent.Kind]
    public var createdAt: Date
    public var updatedAt: Date

    public init(name: String, url: TokenEndpointURL, events: [WebhookEvent.Kind], createdAt: Date, updatedAt: Date) {
        self.name = name
        self.url = url
        self.events = Array(Set(events)).sorted()
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// 1-128 of a-z, 0-9, `.`, `_` and `-` (not `.` or `..`), as login roles' names.
    public static func isValidName(_ name: String) -> Bool { LoginRole.isValidName(name) }
}

/// A webhook's signing key (Standard Webhooks): the bytes that `whsec_` + base64 spells. 24 to 64
/// bytes, as that specification bounds them; keychaind makes 32.
public enum WebhookSecret {
    public static let minimumBytes = 24
    public static let maximumBytes = 64
    public static let generatedBytes = 32

    /// A fresh random key.
    public static func generate() -> SecretBytes {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<generatedBytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        defer { SecretBytes.wipe(&bytes) }
        return SecretBytes(bytes)
    }
}

/// One event on its way to one webhook: enqueued with the change it tells of, delivered at
/// least once, every attempt on every node with the same `id` (the `webhook-id` header).
public struct WebhookDelivery: Sendable, Equatable {
    /// `msg_` and 128 random bits in base64url.
    public var id: String
    public var webhook: String
    /// Its retries end `webhooks.retrySeconds` after the event's `at`.
    public var event: WebhookEvent
    /// Attempts so far, the one just claimed included.
    public var attempts: Int

    public init(id: String, webhook: String, event: WebhookEvent, attempts: Int) {
        self.id = id
        self.webhook = webhook
        self.event = event
        self.attempts = attempts
    }

    /// A new delivery's id.
    public static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (generator.next() as UInt64, generator.next() as UInt64)
        return "msg_" + withUnsafeBytes(of: &bytes) { Base64URL.encode($0) }
    }
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

/// What `/metrics` shows of webhook deliveries (`keychaind_webhook_deliveries_total{outcome}`).
public struct WebhookStatistics: Sendable, Equatable {
    /// How one delivery attempt ended.
    public enum Outcome: String, Sendable, CaseIterable {
        /// The receiver answered 2xx: the delivery is done.
        case delivered
        /// It did not: the delivery is due again after a backoff.
        case retried
        /// It did not, and `webhooks.retrySeconds` have passed since the event: dropped.
        case givenUp = "given_up"
    }

    public var attempts: [Outcome: UInt64]

    public init(attempts: [Outcome: UInt64] = [:]) { self.attempts = attempts }
}
