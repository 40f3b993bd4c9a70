import KeychainConcurrency
public import KeychainCore

/// Counts exchanges by outcome and their latency, and revocations by outcome, for `/metrics`.
public final class RefreshMetrics: Sendable {
    public typealias Outcome = RefreshStatistics.Outcome

    private let counts = PThreadLocked(RefreshStatistics())

    public init() {}

    func record(_ outcome: Outcome, nanoseconds: UInt64) {
        let seconds = Double(nanoseconds) / 1e9
        let bucket = RefreshStatistics.latencyBuckets.firstIndex { seconds <= $0 } ?? RefreshStatistics.latencyBuckets.count
        counts.withLock { statistics in
            statistics.exchanges[outcome, default: 0] += 1
            statistics.latencyCounts[bucket] += 1
            statistics.latencySum += seconds
        }
    }

    func record(_ outcome: RefreshStatistics.RevocationOutcome) {
        counts.withLock { $0.revocations[outcome, default: 0] += 1 }
    }

    /// The counts so far with `settings`, the settings per state, filled in.
    public func statistics(settings: [RefreshState.Condition: Int]) -> RefreshStatistics {
        var statistics = counts.withLock { $0 }
        statistics.settings = settings
        return statistics
    }
}
