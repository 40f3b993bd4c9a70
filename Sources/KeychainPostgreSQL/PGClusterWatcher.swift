import Foundation
import KeychainConcurrency
import Logging
import KeychainStore

/// Follows the cluster's shared state (`PGClusterState`) for one node, on a thread and a
/// connection of its own: `LISTEN keychaind`, then read the state row on every announcement and
/// at least once a second, and report each change to `changed` and each revoked token announced to
/// `revoked` (on this thread). After a lost
/// connection it connects again (once a second) and reads the row again, so nothing announced
/// meanwhile is missed for longer than that. Whether the database answered last time is `reachable`.
/// It writes this node's heartbeat too (`PGHeartbeat`), on the same connection.
final class PGClusterWatcher: Sendable {
    private struct State {
        var last: PGClusterState.Snapshot?
        var reachable = true
        var stopped = false
    }

    private let settings: PGSettings
    private let logger: Logger
    private let heartbeat: PGHeartbeat
    private let changed: @Sendable (_ old: PGClusterState.Snapshot, _ new: PGClusterState.Snapshot) -> Void
    private let revoked: @Sendable (_ version: Int64, _ tokenHash: [UInt8]) -> Void
    private let state = PThreadMonitor(State())
    private let finished = PThreadMonitor(false)
    /// How long it waits for an announcement before it reads the row anyway.
    static let intervalMilliseconds: Int32 = 1_000

    init(
        settings: PGSettings, initial: PGClusterState.Snapshot, heartbeat: PGHeartbeat, logger: Logger,
        revoked: @escaping @Sendable (_ version: Int64, _ tokenHash: [UInt8]) -> Void,
        changed: @escaping @Sendable (_ old: PGClusterState.Snapshot, _ new: PGClusterState.Snapshot) -> Void
    ) {
        self.revoked = revoked
        self.settings = settings
        self.logger = logger
        self.heartbeat = heartbeat
        self.changed = changed
        state.withLock { $0.last = initial }
    }

    /// Whether the database answered the last read (health).
    var reachable: Bool { state.withLock { $0.reachable } }

    func start() {
        let thread = Thread { [self] in
            run()
            finished.withLock { $0 = true }
            finished.wakeAll()
        }
        thread.name = "keychaind-cluster"
        thread.start()
    }

    /// Stops the thread and waits for it (at most one interval).
    func stop() {
        let started = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        state.wakeAll()
        if started { _ = finished.wait { $0 ? true : nil } }
    }

    private func run() {
        var connection: PGConnection?
        while !state.withLock({ $0.stopped }) {
            do {
                let db: PGConnection
                if let connection, connection.isConnected {
                    db = connection
                } else {
                    db = try settings.connect()
                    try db.executeScript("LISTEN \(PGClusterState.channel)")
                    connection = db
                }
                let now = try PGClusterState.read(on: db)
                let (old, recovered) = state.withLock { state -> (PGClusterState.Snapshot?, Bool) in
                    defer {
                        state.last = now
                        state.reachable = true
                    }
                    return (state.last, !state.reachable)
                }
                if recovered { logger.notice("PostgreSQL reachable again") }
                if let old, old != now { changed(old, now) }
                try heartbeat.beatIfDue(on: db)
                for payload in try db.notifications(waitingUpTo: Self.intervalMilliseconds) {
                    if let revocation = PGClusterState.revocation(in: payload) { revoked(revocation.version, revocation.tokenHash) }
                }
            } catch {
                connection = nil
                let wasReachable = state.withLock { state -> Bool in
                    defer { state.reachable = false }
                    return state.reachable
                }
                if wasReachable { logger.error("PostgreSQL unreachable", metadata: ["error": "\(error)"]) }
                _ = state.wait(timeoutMilliseconds: Int(Self.intervalMilliseconds)) { $0.stopped ? true : nil }
            }
        }
    }
}
