#if canImport(Glibc)
import Glibc
#endif
public import KeychainCore
import Synchronization
import KeychainStore

/// A node's `DatabaseStatistics`, kept by its connections (each statement's latency, connections
/// made, lost and in use) and read by `/metrics`.
public final class PGStatistics: Sendable {
    private let statistics = Mutex(DatabaseStatistics())

    init() {}

    public var current: DatabaseStatistics { statistics.withLock { $0 } }

    func connected() { statistics.withLock { $0.connectionsOpen += 1 } }
    func disconnected() { statistics.withLock { $0.connectionsOpen -= 1 } }
    func failedToConnectOrLost() { statistics.withLock { $0.connectionFailures += 1 } }

    func recordCluster(clockSkewSeconds: Double, liveNodes: Int, oldestLiveRelease: String?) {
        statistics.withLock {
            $0.clockSkewSeconds = clockSkewSeconds
            $0.liveNodes = liveNodes
            $0.oldestLiveRelease = oldestLiveRelease
        }
    }

    /// Runs `body` as a use of a connection (counted in use meanwhile).
    func using<T>(_ body: () throws -> T) rethrows -> T {
        statistics.withLock { $0.connectionsInUse += 1 }
        defer { statistics.withLock { $0.connectionsInUse -= 1 } }
        return try body()
    }

    /// Runs one statement, recording how long it took.
    func timing<T>(_ body: () throws -> T) rethrows -> T {
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        defer {
            var end = timespec()
            clock_gettime(CLOCK_MONOTONIC, &end)
            let seconds = Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
            statistics.withLock { $0.record(statementSeconds: seconds) }
        }
        return try body()
    }
}
