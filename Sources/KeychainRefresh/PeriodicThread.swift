import Foundation

/// A named thread that runs `work` every `interval` until stopped: the background refresher's
/// and the webhook deliverer's. `work` is given whether a stop was asked for, so that a long
/// round (many exchanges, many deliveries) ends early.
final class PeriodicThread: @unchecked Sendable {
    // @unchecked: `stopping` is only touched while `wake` is locked.
    private let wake = NSCondition()
    private var stopping = false

    /// Starts the thread; its first round runs `interval` from now.
    init(name: String, interval: TimeInterval, work: @escaping @Sendable (_ isStopping: @escaping @Sendable () -> Bool) -> Void) {
        let thread = Thread { [self] in
            while true {
                wake.lock()
                let deadline = Date().addingTimeInterval(interval)
                while !stopping, wake.wait(until: deadline) {}
                let stop = stopping
                wake.unlock()
                if stop { return }
                work { [self] in isStopping }
            }
        }
        thread.name = name
        thread.start()
    }

    /// Asks the thread to stop after the round it is in, if any; does not wait.
    func stop() {
        wake.withLock {
            stopping = true
            wake.broadcast()
        }
    }

    private var isStopping: Bool { wake.withLock { stopping } }
}
