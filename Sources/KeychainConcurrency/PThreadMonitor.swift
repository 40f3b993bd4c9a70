#if canImport(Glibc)
public import Glibc
#endif

/// State behind a `pthread_mutex_t` with a condition variable: threads wait, the mutex released
/// meanwhile, until the state says they may go on; whoever changes what they wait for wakes them.
/// The storage's group commit parks the writes of a batch here until their commit is durable.
public final class PThreadMonitor<State>: @unchecked Sendable {
    // @unchecked: `state` is only touched while `mutex` is held.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var state: State

    public init(_ state: State) {
        self.state = state
        mutex = allocateAdaptiveMutex()
        condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Waits until `ready` returns a value (it is asked under the lock, first at once, then after
    /// each wake-up) and returns that value, the lock still held while `ready` runs.
    public func wait<Result>(until ready: (inout State) -> Result?) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let result = ready(&state) { return result }
            pthread_cond_wait(condition, mutex)
        }
    }

    /// `wait(until:)` for at most `timeoutMilliseconds`: nil when the time ran out first.
    public func wait<Result>(timeoutMilliseconds: Int, until ready: (inout State) -> Result?) -> Result? {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + (timeoutMilliseconds % 1000) * 1_000_000
        deadline.tv_sec += timeoutMilliseconds / 1000 + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let result = ready(&state) { return result }
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { return ready(&state) }
        }
    }

    /// Wakes every waiting thread (each asks its `ready` again). Call after changing the state.
    public func wakeAll() {
        pthread_cond_broadcast(condition)
    }
}
