/// What `/metrics` shows of server-side refresh: exchanges by outcome, their latency, how many
/// settings are in each state (`keychaind_token_refresh_*`), and the revocations of deleted
/// refresh tokens by outcome (`keychaind_token_revocations_total`).
public struct RefreshStatistics: Sendable, Equatable {
    /// How an RFC 7009 revocation of a deleted refresh token ended.
    public enum RevocationOutcome: String, Sendable, CaseIterable {
        /// The provider answered 200.
        case revoked
        /// The provider answered an OAuth error (4xx).
        case refused
        /// No usable answer: network, TLS, timeout, 5xx.
        case failed
        /// Not sent: too many revocations were waiting.
        case dropped
    }

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
    public var revocations: [RevocationOutcome: UInt64] = [:]

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
