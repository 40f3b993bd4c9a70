#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import Synchronization
import KeychainStore

/// The nodes of a cluster as `cluster_nodes` (migration 5) records them: each node's release,
/// the schema version it knows and its heartbeat. A feature that creates state an older release
/// could not enforce asks `live` first (and answers errSecParam "cluster not upgraded"); until one
/// does, the answer is in `/v1/metrics` and the start log, for the operator's rolling upgrade.
enum PGClusterNodes {
    /// A node whose heartbeat is older than this is taken for stopped (six missed beats).
    static let liveSeconds: Int64 = 30

    /// Writes `node`'s row with the database's `now()` as its heartbeat (and as its start when
    /// `starting`); returns that `now()` in microseconds since 1970.
    static func beat(_ node: String, release: String, starting: Bool, on db: PGConnection) throws -> Int64 {
        let rows = try db.execute(
            """
            INSERT INTO cluster_nodes AS n (node, release, schema_version, started_at, heartbeat_at)
                VALUES ($1, $2, $3, now(), now())
            ON CONFLICT (node) DO UPDATE SET release = excluded.release, schema_version = excluded.schema_version,
                heartbeat_at = excluded.heartbeat_at,
                started_at = CASE WHEN $4 THEN excluded.started_at ELSE n.started_at END
            RETURNING (extract(epoch FROM n.heartbeat_at) * 1000000)::bigint
            """,
            [.text(node), .text(release), .int8(PGMigrations.latestVersion), .bool(starting)])
        return rows.int64(0, 0)
    }

    /// The releases of the nodes whose heartbeat is within `liveSeconds`: how many, and the
    /// oldest of them (releases compare as dotted numbers: 0.10.0 is after 0.9.1).
    static func live(on db: PGConnection) throws -> (count: Int, oldestRelease: String?) {
        let rows = try db.execute(
            "SELECT release FROM cluster_nodes WHERE heartbeat_at > now() - make_interval(secs => $1)",
            [.int8(liveSeconds)])
        let releases = (0..<rows.count).map { rows.text($0, 0) }
        return (releases.count, releases.min { $0.compare($1, options: .numeric) == .orderedAscending })
    }

    /// This node's name in the table: its host and data directory (which one process at a time
    /// holds, `DataDirectory.acquireLock`), so a restarted node takes its row back.
    static func nodeName(dataDirectory: String) -> String {
        var host = [UInt8](repeating: 0, count: 256)
        let named = host.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { gethostname($0.baseAddress!, $0.count - 1) == 0 }
        }
        let hostName = named ? String(decoding: host.prefix { $0 != 0 }, as: UTF8.self) : "unknown-host"
        return "\(hostName):\(URL(fileURLWithPath: dataDirectory).standardizedFileURL.path)"
    }
}

/// This node's heartbeat: written at start and then every `intervalSeconds` by the cluster
/// watcher on its connection. Each beat also compares this node's clock with the database's
/// (its `now()` against this node's time half-way through the round trip) and warns past
/// `skewWarningSeconds`: expiry and refresh times are this node's, so nodes that disagree
/// expire tokens at different moments. What it learns goes to the node's `DatabaseStatistics`.
final class PGHeartbeat: Sendable {
    static let intervalSeconds: Double = 5
    static let skewWarningSeconds = 2.0

    let node: String
    let release: String
    private let statistics: PGStatistics
    private let logger: Logger
    /// This node's clock (a test sets one that is off).
    private let clock: @Sendable () -> Date
    private let state = Mutex((last: ContinuousClock.Instant?.none, skewed: false, failing: false))

    init(
        node: String, release: String, statistics: PGStatistics, logger: Logger,
        clock: @escaping @Sendable () -> Date = Date.init
    ) {
        self.node = node
        self.release = release
        self.statistics = statistics
        self.logger = logger
        self.clock = clock
    }

    /// Writes the heartbeat, measures the clock difference and reads the live nodes.
    func beat(on db: PGConnection, starting: Bool = false) throws {
        let sent = clock().timeIntervalSince1970
        let databaseMicroseconds = try PGClusterNodes.beat(node, release: release, starting: starting, on: db)
        let received = clock().timeIntervalSince1970
        let skew = Double(databaseMicroseconds) / 1_000_000 - (sent + received) / 2
        let live = try PGClusterNodes.live(on: db)
        statistics.recordCluster(clockSkewSeconds: skew, liveNodes: live.count, oldestLiveRelease: live.oldestRelease)
        let skewed = abs(skew) > Self.skewWarningSeconds
        let wasSkewed = state.withLock { state in
            defer { state = (ContinuousClock.now, skewed, false) }
            return state.skewed
        }
        let difference = String(format: "%.3f", skew)
        if skewed && (starting || !wasSkewed) {
            logger.warning(
                "this node's clock and the database's differ by more than 2 s: token expiry and refresh times differ between nodes; synchronise the clocks (NTP)",
                metadata: ["databaseMinusNodeSeconds": "\(difference)"])
        } else if wasSkewed && !skewed {
            logger.notice("this node's clock agrees with the database's again", metadata: ["databaseMinusNodeSeconds": "\(difference)"])
        }
    }

    /// Beats when `intervalSeconds` have passed since the last beat. Only a lost connection is
    /// thrown (the watcher connects again); a beat the database refuses is logged once and tried
    /// again, and says nothing of whether the database answers.
    func beatIfDue(on db: PGConnection) throws {
        let due = state.withLock { state in
            state.last.map { ContinuousClock.now - $0 >= .seconds(Self.intervalSeconds) } ?? true
        }
        guard due else { return }
        do {
            try beat(on: db)
        } catch let error as PostgreSQLError where !error.isConnectionFailure {
            let wasFailing = state.withLock { state in
                defer { state.failing = true }
                return state.failing
            }
            if !wasFailing { logger.error("this node's heartbeat cannot be written", metadata: ["error": "\(error)"]) }
        }
    }
}
