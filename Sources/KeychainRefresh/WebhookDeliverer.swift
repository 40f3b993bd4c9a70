public import Foundation
import KeychainAPI
import KeychainConcurrency
public import KeychainCore
import Synchronization

/// Delivers webhook events (docs/api.md, "Webhooks"): a thread that, every `interval` and until
/// none is due, claims a due delivery from the store (on PostgreSQL any node may: the claim hands
/// each attempt to one node), POSTs it signed as Standard Webhooks say through libcurl under the
/// outbound rules, removes it on a 2xx, and otherwise retries it with exponential backoff until
/// `retryFor` has passed since the event. Every attempt of a delivery carries the `webhook-id`
/// it was enqueued with; `webhook-timestamp` is the attempt's.
public final class WebhookDeliverer: Sendable {
    private let store: any WebhookStore
    private let client: TokenEndpointClient
    private let retryFor: TimeInterval
    private let clock: @Sendable () -> Date
    /// Told of every attempt's outcome and, when it failed, why (a status or libcurl's reason;
    /// never a secret), for the log.
    private let report: @Sendable (WebhookDelivery, WebhookStatistics.Outcome, String?) -> Void
    private let counts = PThreadLocked(WebhookStatistics())
    private let thread = Mutex<PeriodicThread?>(nil)

    /// How long a claimed delivery is kept from other nodes: longer than an attempt can take
    /// (connect and transfer bounded by `client`'s settings).
    static let lease: TimeInterval = 60

    public init(
        store: any WebhookStore, client: TokenEndpointClient, retryFor: TimeInterval,
        clock: @escaping @Sendable () -> Date = { Date() },
        report: @escaping @Sendable (WebhookDelivery, WebhookStatistics.Outcome, String?) -> Void = { _, _, _ in }
    ) {
        self.store = store
        self.client = client
        self.retryFor = retryFor
        self.clock = clock
        self.report = report
    }

    /// Attempts so far, by outcome.
    public func statistics() -> WebhookStatistics { counts.withLock { $0 } }

    /// Attempts every delivery due now, one at a time, until none is left or `stop` says so. A
    /// store error (a locked vault) ends the round; the next tries again.
    public func deliverDue(stop: () -> Bool = { false }) {
        while !stop() {
            guard let claimed = try? store.claimDeliveries(at: clock(), lease: Self.lease, limit: 1).first else { return }
            attempt(claimed)
        }
    }

    /// One attempt of a claimed delivery, and its outcome settled in the store.
    func attempt(_ claimed: ClaimedDelivery) {
        let delivery = claimed.delivery
        let body = WebhookEventBody.encode(delivery.event)
        let headers = Self.signedHeaders(
            id: delivery.id, timestamp: Int64(clock().timeIntervalSince1970), body: body, signer: claimed.signer)
        var failure: String?
        do {
            let answer = try client.postJSON(claimed.url, body: body, headers: headers)
            if !(200..<300).contains(answer.status) { failure = "the receiver answered HTTP \(answer.status)" }
        } catch {
            failure = "\(error)"
        }
        let outcome: WebhookStatistics.Outcome
        var retryAt: Date?
        if failure == nil {
            outcome = .delivered
        } else {
            let next = clock().addingTimeInterval(Self.backoff(afterAttempts: delivery.attempts))
            if next.timeIntervalSince(delivery.event.at) > retryFor {
                outcome = .givenUp
            } else {
                outcome = .retried
                retryAt = next
            }
        }
        // Unsettled (the store failed), the delivery comes back when its lease ends.
        try? store.settleDelivery(delivery.id, retryAt: retryAt)
        counts.withLock { $0.attempts[outcome, default: 0] += 1 }
        report(delivery, outcome, failure)
    }

    /// The Standard Webhooks headers: `webhook-signature` is `v1,` and the base64 of
    /// HMAC-SHA256 over `<id>.<timestamp>.<body>`.
    public static func signedHeaders(id: String, timestamp: Int64, body: [UInt8], signer: any WebhookSigner) -> [String] {
        let signature = Base64.encode(signer.signature(of: Array("\(id).\(timestamp).".utf8) + body))
        return ["webhook-id: \(id)", "webhook-timestamp: \(timestamp)", "webhook-signature: v1,\(signature)"]
    }

    /// The wait before the next attempt after `attempts` failed ones: 5 s, doubling up to an
    /// hour, give or take a fifth (so that many deliveries that failed together spread out).
    static func backoff(afterAttempts attempts: Int) -> TimeInterval {
        let base = min(5 * pow(2, Double(max(attempts, 1) - 1)), 3600)
        return base * Double.random(in: 0.8...1.2)
    }

    // MARK: - The thread

    public func start(interval: TimeInterval = 1) {
        thread.withLock {
            $0 = PeriodicThread(name: "keychaind-webhooks", interval: interval) { [self] isStopping in
                deliverDue(stop: isStopping)
            }
        }
    }

    /// Asks the thread to stop after the attempt it is in, if any; does not wait.
    public func stop() {
        thread.withLock { $0?.stop() }
    }
}
