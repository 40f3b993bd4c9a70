#if canImport(Glibc)
import Glibc
#endif

/// One instance of `Value` for each thread that asks for it, made the first time it asks: state
/// that libmicrohttpd's workers would otherwise share. Shared state costs on every request even
/// without waiting for a lock: each lock, counter and reference count written by one core is a
/// cache miss for the other (docs/decisions.md, "Per-thread state").
///
/// Every instance made is kept until this object goes (so a thread's counts outlive it), and
/// `instances` lists them for readers that add them up. keychaind's request threads are a fixed
/// pool, so the instances are as many as the threads that serve requests, plus a few.
public final class PerThread<Value: AnyObject & Sendable>: @unchecked Sendable {
    // @unchecked: `made` is only touched under its lock; each thread's slot of `key` only by it.
    /// A `let`: reading a stored `var` of a class costs a dynamic exclusivity check
    /// (~80 instructions, callgrind), and `current` runs several times per request.
    private let key: pthread_key_t
    /// The one instance of every thread when the process is out of thread-specific keys.
    private let fallback: Value?
    private let make: @Sendable () -> Value
    private let made = PThreadLocked<[Value]>([])

    public init(_ make: @escaping @Sendable () -> Value) {
        self.make = make
        var key = pthread_key_t()
        let created = pthread_key_create(&key, nil) == 0
        self.key = key
        if created {
            fallback = nil
        } else {
            let value = make()
            made.withLock { $0.append(value) }
            fallback = value
        }
    }

    deinit {
        // The instances are released with `made`. A thread's slot that still names one is never
        // read again: glibc gives a later key of the same number empty slots.
        if fallback == nil { pthread_key_delete(key) }
    }

    /// The calling thread's instance.
    public var current: Value {
        if let fallback { return fallback }
        if let slot = pthread_getspecific(key) { return Unmanaged<Value>.fromOpaque(slot).takeUnretainedValue() }
        let value = make()
        made.withLock { $0.append(value) }
        pthread_setspecific(key, Unmanaged.passUnretained(value).toOpaque())
        return value
    }

    /// Every instance made so far, for readers that add them up.
    public var instances: [Value] { made.withLock { $0 } }
}
