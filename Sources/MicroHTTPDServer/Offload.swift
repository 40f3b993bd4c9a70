import Foundation

/// Threads that answer requests a worker should not wait for: the worker suspends the
/// connection, hands the request over and goes on serving its other connections; the answer is
/// queued when the connection is resumed. keychaind hands over the writes that would queue
/// behind a storage commit in flight, so that as many writes can wait for a commit as there are
/// connections sending them, not only as many as there are workers (docs/decisions.md, "Group
/// commit").
///
/// Threads are started as jobs need them, up to `maxThreads`, and kept; jobs beyond wait in
/// arrival order.
final class Offload: @unchecked Sendable {
    // @unchecked: every field is only touched while `condition` is locked.
    private let condition = NSCondition()
    /// Waiting jobs, at most one per connection.
    private var jobs: [@Sendable () -> Void] = []
    private var threads = 0
    private var idleThreads = 0
    private var running = 0
    let maxThreads: Int

    init(maxThreads: Int) {
        self.maxThreads = max(1, maxThreads)
    }

    /// Runs `job` on one of the pool's threads.
    func run(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        running += 1
        let start = jobs.count > idleThreads && threads < maxThreads
        if start { threads += 1 }
        condition.signal()
        condition.unlock()
        if start {
            let thread = Thread { [self] in work() }
            thread.name = "keychaind-offload"
            thread.start()
        }
    }

    /// Jobs handed over and not finished.
    var unfinished: Int {
        condition.lock()
        defer { condition.unlock() }
        return running
    }

    private func work() {
        condition.lock()
        while true {
            while jobs.isEmpty {
                idleThreads += 1
                condition.wait()
                idleThreads -= 1
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
            condition.lock()
            running -= 1
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
