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
