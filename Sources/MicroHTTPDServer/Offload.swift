import Foundation
import KeychainConcurrency

/// Threads that answer requests a worker should not wait for: the worker suspends the
/// connection, hands the request over and goes on serving its other connections; the answer is
/// queued when the connection is resumed. keychaind hands over the writes that would queue
/// behind a storage commit in flight, so that as many writes can wait for a commit as there are
/// connections sending them, not only as many as there are workers (docs/decisions.md, "Group
/// commit").
///
/// Threads are started as jobs need them, up to `maxThreads`, and kept; jobs beyond wait in
/// arrival order. A job goes straight to an idle thread, which alone is woken (no thread wakes
/// only to find the job taken, nor wakes holding a lock another needs), and the thread idle for
/// the shortest time is chosen, so under a light load the same few threads (and stacks) serve.
final class Offload: Sendable {
    private final class Worker: @unchecked Sendable {
        // @unchecked: `job` is set by `run` before `woken` is signalled and read after the wait.
        let woken = DispatchSemaphore(value: 0)
        var job: (@Sendable () -> Void)?
    }

    private struct Pool {
        /// Jobs no thread was free for, at most one per connection.
        var jobs: [@Sendable () -> Void] = []
        /// Threads waiting for a job, the last to go idle last.
        var idle: [Worker] = []
        var threads = 0
        var running = 0
    }

    private let pool = PThreadLocked(Pool())
    let maxThreads: Int

    init(maxThreads: Int) {
        self.maxThreads = max(1, maxThreads)
    }

    /// Runs `job` on one of the pool's threads.
    func run(_ job: @escaping @Sendable () -> Void) {
        enum Placement { case idle(Worker), newThread(Worker), queued }
        let placement = pool.withLock { pool -> Placement in
            pool.running += 1
            if let worker = pool.idle.popLast() {
                worker.job = job
                return .idle(worker)
            }
            guard pool.threads < maxThreads else {
                pool.jobs.append(job)
                return .queued
            }
            pool.threads += 1
            let worker = Worker()
            worker.job = job
            return .newThread(worker)
        }
        switch placement {
        case .idle(let worker):
            worker.woken.signal()
        case .newThread(let worker):
            let thread = Thread { [self] in work(as: worker) }
            thread.name = "keychaind-offload"
            thread.start()
        case .queued:
            break
        }
    }

    /// Jobs handed over and not finished.
    var unfinished: Int { pool.withLock { $0.running } }

    private func work(as worker: Worker) {
        while true {
            if let job = worker.job {
                worker.job = nil
                job()
            }
            let waits = pool.withLock { pool -> Bool in
                pool.running -= 1
                if !pool.jobs.isEmpty {
                    worker.job = pool.jobs.removeFirst()
                    return false
                }
                pool.idle.append(worker)
                return true
            }
            if waits { worker.woken.wait() }
        }
    }
}

/// A suspended connection and its request's state, handed to an `Offload` thread.
struct Suspended: @unchecked Sendable {
    // @unchecked: libmicrohttpd leaves a suspended connection alone until it is resumed, and
    // `pending` is only touched by the thread answering it until then.
    let connection: OpaquePointer
    let pending: PendingRequest
}
