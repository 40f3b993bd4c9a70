/// What a node's PostgreSQL connections have done since start (for metrics): connections open
/// and in use now, statements run and their latency, connection failures; and what its last
/// heartbeat learned of the cluster.
public struct DatabaseStatistics: Sendable, Equatable {
    /// The upper bounds, in seconds, of the statement latency buckets.
    public static let latencyBounds: [Double] = [0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]

    /// Connections open now (the workers', the keyring's, the cluster watcher's).
    public var connectionsOpen = 0
    /// Connections running a statement or holding a transaction now.
    public var connectionsInUse = 0
    public var statements: UInt64 = 0
    /// Seconds spent in statements, summed.
    public var statementSeconds: Double = 0
    /// Statements per bucket of `latencyBounds`, not cumulative.
    public var statementsByLatency = [UInt64](repeating: 0, count: DatabaseStatistics.latencyBounds.count)
    /// Connections that could not be made or were lost.
    public var connectionFailures: UInt64 = 0
    /// The database's clock minus this node's, in seconds, at the last heartbeat.
    public var clockSkewSeconds: Double = 0
    /// Nodes whose heartbeat is recent (this one included), and the oldest release among them.
    public var liveNodes = 0
    public var oldestLiveRelease: String?

    public init() {}

    /// Counts one statement that took `seconds`.
    public mutating func record(statementSeconds seconds: Double) {
        statements += 1
        statementSeconds += seconds
        if let bucket = Self.latencyBounds.firstIndex(where: { seconds <= $0 }) { statementsByLatency[bucket] += 1 }
    }
}
