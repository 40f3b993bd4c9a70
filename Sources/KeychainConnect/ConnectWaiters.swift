import Dispatch
public import Foundation
public import KeychainCore
public import Logging
import Synchronization

/// The long-polls of `GET /v1/connect/{id}?wait=`: each waits on its session's `PendingExchange`,
/// so that the transport suspends it and no thread is held per waiter. A session that ends on
/// this node wakes its waiters at once (`sessionEnded`); one that ends on another node sharing
/// the database is found by one query for every session waited on here, every `pollInterval`
/// while there are waiters (docs/decisions.md, "Connect waits").
public final class ConnectWaiters: Sendable {
    /// A session's waiters on this node, and how many are still waiting.
    private struct Watched {
        let ended = PendingExchange()
        var waiters = 0
    }

    private struct State {
        var sessions: [String: Watched] = [:]
        /// Waits held per client name.
        var perClient: [String: Int] = [:]
    }

    private let state = Mutex(State())
    private let store: any ConnectSessionStore
    public let maxPerClient: Int
    private let pollInterval: TimeInterval
    private let logger: Logger
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)

    public init(store: any ConnectSessionStore, maxPerClient: Int, pollInterval: TimeInterval = 0.25, logger: Logger) {
        self.store = store
        self.maxPerClient = maxPerClient
        self.pollInterval = pollInterval
        self.logger = logger
    }

    /// Begins a wait of at most `seconds` by `client` on session `id`: the exchange to wait on,
    /// which ends when the session does (or never, the caller's limit ending the wait). Nil when
    /// the client already holds `maxPerClient` waits.
    public func beginWait(on id: String, by client: String, seconds: TimeInterval) -> PendingExchange? {
        let ended = state.withLock { state -> PendingExchange? in
            guard state.perClient[client, default: 0] < maxPerClient else { return nil }
            state.perClient[client, default: 0] += 1
            var watched = state.sessions[id] ?? Watched()
            watched.waiters += 1
            state.sessions[id] = watched
            return watched.ended
        }
        // The same moment the transport answers the wait: the client's count goes down with it.
        guard let ended else { return nil }
        ended.whenFinished(orAfter: seconds) { [self] in endWait(on: id, of: ended, by: client) }
        return ended
    }

    /// Wakes the waiters of a session that ended on this node.
    public func sessionEnded(_ id: String) {
        let ended = state.withLock { state in state.sessions.removeValue(forKey: id)?.ended }
        ended?.finish()
    }

    /// Starts the thread that looks for sessions ended on other nodes.
    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            defer { finished.signal() }
            repeat {
                pollOnce()
            } while wake.wait(timeout: .now() + pollInterval) == .timedOut
        }
        thread.name = "keychaind-connect-waits"
        thread.start()
    }

    /// Stops that thread (waits in progress end at their limit).
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        finished.wait()
    }

    /// One look at the store for every session waited on here; wakes those that ended.
    private func pollOnce() {
        let ids = state.withLock { Array($0.sessions.keys) }
        guard !ids.isEmpty else { return }
        do {
            for id in try store.ended(among: ids) { sessionEnded(id) }
        } catch {
            logger.warning("connect waits could not be checked", metadata: ["reason": "\(error)"])
        }
    }

    /// One wait ended: the client holds one fewer; the session is no longer watched once none
    /// waits on it (and not at all once it ended: `sessionEnded` forgot it, and a later wait
    /// watches it anew).
    private func endWait(on id: String, of ended: PendingExchange, by client: String) {
        state.withLock { state in
            let held = (state.perClient[client] ?? 1) - 1
            state.perClient[client] = held > 0 ? held : nil
            guard var watched = state.sessions[id], watched.ended === ended else { return }
            watched.waiters -= 1
            state.sessions[id] = watched.waiters > 0 ? watched : nil
        }
    }
}
