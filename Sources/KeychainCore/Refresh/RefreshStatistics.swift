/// What `/metrics` shows of server-side refresh: exchanges by outcome, their latency, and how many
/// settings are in each state (`keychaind_token_refresh_*`).
public struct RefreshStatistics: Sendable, Equatable {
    /// How an exchange ended.
    public enum Outcome: String, Sendable, CaseIterable {
        /// New tokens stored.
        case refreshed
        /// A failure that may pass (network, 5xx, timeout): the setting is failing.
        case failed
        /// The provider refused the grant or the client: the setting needs new tokens.
        case needsReauth
        /// The outcome was not stored: the setting or the refresh token the exchange started from
        /// was replaced or removed meanwhile, and what is stored now stands.
        case discarded
    }

    /// Upper bounds of the latency buckets, in seconds.
    public static let latencyBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    public var exchanges: [Outcome: UInt64]
    /// Exchanges per latency bucket (not cumulative); the last entry counts those over every bound.
    public var latencyCounts: [UInt64]
    public var latencySum: Double
    public var settings: [RefreshState.Condition: Int]

    public init(
        exchanges: [Outcome: UInt64] = [:],
        latencyCounts: [UInt64] = [UInt64](repeating: 0, count: RefreshStatistics.latencyBuckets.count + 1),
        latencySum: Double = 0, settings: [RefreshState.Condition: Int] = [:]
    ) {
        self.exchanges = exchanges
        self.latencyCounts = latencyCounts
        self.latencySum = latencySum
        self.settings = settings
    }
}
