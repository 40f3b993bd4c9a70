public import Foundation
import Synchronization

/// One thread that, every `interval`, refreshes the tokens whose settings are due: ahead of
/// expiry (`refreshBefore`), or at the end of a failing setting's backoff. A fetch then rarely
/// waits for an exchange. Up to `concurrency` exchanges run at once, for different services,
/// each through the same single flight as fetches, so a fetch arriving meanwhile waits for it
/// rather than starting another.
public final class BackgroundRefresher: Sendable {
    private let refresher: TokenRefresher
    private let interval: TimeInterval
    private let concurrency: Int
    private let thread = Mutex<PeriodicThread?>(nil)

    public init(refresher: TokenRefresher, interval: TimeInterval, concurrency: Int) {
        self.refresher = refresher
        self.interval = interval
        self.concurrency = concurrency
    }

    public func start() {
        let refresher = refresher, concurrency = concurrency
        thread.withLock {
            $0 = PeriodicThread(name: "keychaind-refresh", interval: interval) { isStopping in
                refresher.refreshDue(concurrency: concurrency, stop: isStopping)
            }
        }
    }

    /// Asks the thread to stop after the exchanges it is in, if any; does not wait.
    public func stop() {
        thread.withLock { $0?.stop() }
    }
}
