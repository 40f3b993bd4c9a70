public import Foundation

/// One thread that, every `interval`, refreshes the tokens whose settings are due: ahead of
/// expiry (`refreshBefore`), or at the end of a failing setting's backoff. A fetch then rarely
/// waits for an exchange. Up to `concurrency` exchanges run at once, for different services,
/// each through the same single flight as fetches, so a fetch arriving meanwhile waits for it
/// rather than starting another.
public final class BackgroundRefresher: @unchecked Sendable {
    // @unchecked: `stopping` is only touched while `wake` is locked.
    private let refresher: TokenRefresher
    private let interval: TimeInterval
    private let concurrency: Int
    private let wake = NSCondition()
    private var stopping = false
    private var thread: Thread?

    public init(refresher: TokenRefresher, interval: TimeInterval, concurrency: Int) {
        self.refresher = refresher
        self.interval = interval
        self.concurrency = concurrency
    }

    public func start() {
        let thread = Thread { [self] in run() }
        thread.name = "keychaind-refresh"
        self.thread = thread
        thread.start()
    }

    /// Asks the thread to stop after the exchanges it is in, if any; does not wait.
    public func stop() {
        wake.lock()
        stopping = true
        wake.broadcast()
        wake.unlock()
    }

    private func run() {
        while true {
            wake.lock()
            let deadline = Date().addingTimeInterval(interval)
            while !stopping, wake.wait(until: deadline) {}
            let stop = stopping
            wake.unlock()
            if stop { return }
            refresher.refreshDue(concurrency: concurrency) { [self] in
                wake.lock()
                defer { wake.unlock() }
                return stopping
            }
        }
    }
}
