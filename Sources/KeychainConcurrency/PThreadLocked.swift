#if canImport(Glibc)
public import Glibc
#endif

/// State behind a plain `pthread_mutex_t` (adaptive). Used on the request path instead of
/// Synchronization's `Mutex`, which on Linux is a priority-inheritance futex: contended by
/// libmicrohttpd's workers, its slow path (rt_mutex, context switches) dominated perf profiles
/// of `/health` and of the token route under wrk (docs/benchmarks.md).
public final class PThreadLocked<State>: @unchecked Sendable {
    // @unchecked: `state` is only touched while `mutex` is held.
    // Inlinable, so that callers in other modules get `withLock` specialised for their state and
    // closure instead of the generic entry point (metadata lookups on every call).
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Unchecked: the mutex already keeps accesses apart, and the runtime's dynamic exclusivity
    /// check cost each `withLock` ~80 instructions (callgrind; several per request).
    @exclusivity(unchecked) @usableFromInline var state: State

    public init(_ state: State) {
        self.state = state
        mutex = allocateAdaptiveMutex()
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    @inlinable
    public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// `withLock` when the mutex is free right now; nil (and `body` not run) when another thread holds it.
    @inlinable
    public func withLockIfAvailable<Result>(_ body: (inout State) throws -> Result) rethrows -> Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}

/// A new, initialised `pthread_mutex_t` of the adaptive kind (it spins briefly before sleeping,
/// so a waiter for a short critical section rarely needs a futex wait and a wake-up). The owner
/// destroys and deallocates it.
public func allocateAdaptiveMutex() -> UnsafeMutablePointer<pthread_mutex_t> {
    let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    var attributes = pthread_mutexattr_t()
    pthread_mutexattr_init(&attributes)
    pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
    pthread_mutex_init(mutex, &attributes)
    pthread_mutexattr_destroy(&attributes)
    return mutex
}
