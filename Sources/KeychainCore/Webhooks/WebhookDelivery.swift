public import Foundation

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
