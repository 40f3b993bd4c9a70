import Foundation
import KeychainCore
import Synchronization
import Testing
@testable import KeychainStore
@testable import KeychainPostgreSQL

/// Each node records its release and a heartbeat in `cluster_nodes` (migration 5), and compares
/// its clock with the database's at each beat (issue 41, item 6).
@Suite("PostgreSQL heartbeat")
struct PGHeartbeatTests {
    /// The oldest release among live nodes compares releases as numbers and leaves out nodes
    /// whose heartbeat is older than `PGClusterNodes.liveSeconds`.
    @Test func theOldestLiveReleaseIsAmongRecentHeartbeatsComparedAsNumbers() throws {
        let db = try PGTestDatabase().connect()
        try PGMigrations.apply(on: db)
        #expect(try PGClusterNodes.live(on: db).count == 0)
        _ = try PGClusterNodes.beat("a", release: "0.10.0", starting: true, on: db)
        _ = try PGClusterNodes.beat("b", release: "0.9.1", starting: true, on: db)
        _ = try PGClusterNodes.beat("c", release: "0.1.0", starting: true, on: db)
        try db.execute("UPDATE cluster_nodes SET heartbeat_at = now() - interval '31 seconds' WHERE node = 'c'")
        let live = try PGClusterNodes.live(on: db)
        #expect(live.count == 2)
        #expect(live.oldestRelease == "0.9.1")
        // A node restarted with another release takes its row back; its start moves, a beat's does not.
        _ = try PGClusterNodes.beat("b", release: "0.11.0", starting: false, on: db)
        #expect(try PGClusterNodes.live(on: db).oldestRelease == "0.10.0")
        #expect(try db.execute("SELECT count(*) FROM cluster_nodes").int64(0, 0) == 3)
        #expect(try db.execute("SELECT schema_version FROM cluster_nodes WHERE node = 'b'").int64(0, 0) == PGMigrations.latestVersion)
    }

    /// A node whose clock is 10 s ahead of the database's warns once, exports the difference,
    /// and says when its clock agrees again; one within 2 s does not warn.
    @Test func aClockOffByMoreThanTwoSecondsIsWarnedAboutAndExported() throws {
        let database = try PGTestDatabase()
        let db = try database.connect()
        try PGMigrations.apply(on: db)
        let settings = PGSettings(url: database.url)
        let offset = Mutex(10.0)
        let (logger, logs) = testLogger()
        let heartbeat = PGHeartbeat(
            node: "skewed", release: "0.1.0", statistics: settings.statistics, logger: logger,
            clock: { Date().addingTimeInterval(offset.withLock { $0 }) })
        try heartbeat.beat(on: db, starting: true)
        let skew = settings.statistics.current.clockSkewSeconds
        #expect(skew < -9 && skew > -11, "\(skew)")
        #expect(settings.statistics.current.liveNodes == 1 && settings.statistics.current.oldestLiveRelease == "0.1.0")
        try heartbeat.beat(on: db)
        let warnings = logs.lines.withLock { $0.filter { $0.hasPrefix("warning") && $0.contains("clock") } }
        #expect(warnings.count == 1, "\(warnings)")
        offset.withLock { $0 = 0.5 }
        try heartbeat.beat(on: db)
        #expect(abs(settings.statistics.current.clockSkewSeconds) < 2)
        #expect(logs.lines.withLock { $0.contains { $0.hasPrefix("notice") && $0.contains("agrees with the database's again") } })

        let (calmLogger, calmLogs) = testLogger()
        try PGHeartbeat(node: "calm", release: "0.1.0", statistics: settings.statistics, logger: calmLogger)
            .beat(on: db, starting: true)
        #expect(calmLogs.lines.withLock { $0.isEmpty })
    }

    /// A beat the database refuses (here, its table gone) is logged once and not thrown: the
    /// watcher would take it for a lost database and the node's health would answer 503.
    @Test func aHeartbeatTheDatabaseRefusesIsLoggedOnceNotThrown() throws {
        let database = try PGTestDatabase()
        let db = try database.connect()
        try PGMigrations.apply(on: db)
        try db.execute("DROP TABLE cluster_nodes")
        let (logger, logs) = testLogger()
        let heartbeat = PGHeartbeat(
            node: "n", release: "0.1.0", statistics: PGSettings(url: database.url).statistics, logger: logger)
        try heartbeat.beatIfDue(on: db)
        try heartbeat.beatIfDue(on: db)
        #expect(logs.lines.withLock { $0.filter { $0.contains("heartbeat cannot be written") }.count } == 1)
    }
}
