#if canImport(Glibc)
import Glibc
#endif
import Foundation
import KeychainConcurrency

/// Log lines handed over by request threads and written by one background thread, in the order
/// they were appended, many per `write(2)`.
///
/// Writing a line per request on the request path cost a `write(2)` (plus, for the audit log, an
/// `fstat`) under a lock that every libmicrohttpd worker contends for; at 64 connections these
/// were about a third of the token route's time (docs/benchmarks.md). Here `append` only copies
/// the line into a buffer. The writer wakes when the buffer stops being empty, waits `linger`
/// for more lines to arrive (or less, when `flush` asks), and hands everything pending to `sink`
/// at once. So a line reaches the kernel within about `linger` of its request, whatever the load.
/// While lines keep coming, the writer then waits one `linger` at a time and takes what arrived,
/// without being woken; only after a `linger` without lines does it wait for `append` to wake it.
/// Under load that is one wake-up per `linger` and no signal from the request threads.
///
/// Bounded: when `capacity` bytes are pending (the sink is slow or stuck), `append` waits for
/// room rather than dropping lines or growing without end. `flush` returns once everything
/// appended before it has been through `sink`; `close` flushes and stops the thread.
public final class LineBatcher: @unchecked Sendable {
    // @unchecked: every stored `var` is touched only while `mutex` is held, except `sink` calls,
    // which only the writer thread makes.
    public typealias Sink = @Sendable (_ bytes: [UInt8], _ lines: Int) -> Void

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Signalled when lines arrive, a flush is asked for, or the batcher closes.
    private let work: UnsafeMutablePointer<pthread_cond_t>
    /// Broadcast when a batch has been taken (room) or written (progress).
    private let progress: UnsafeMutablePointer<pthread_cond_t>
    private let sink: Sink
    private let lingerNanoseconds: Int
    private let capacity: Int

    /// Unchecked: only touched under `mutex`, and the runtime's dynamic exclusivity checks cost
    /// `append` ~160 instructions a line (callgrind).
    @exclusivity(unchecked) private var pending: [UInt8] = []
    private var pendingLines = 0
    private var appended: UInt64 = 0
    private var written: UInt64 = 0
    private var flushWanted: UInt64 = 0
    /// The writer waits for a first line (and only then does `append` need to wake it).
    private var writerIdle = false
    private var closing = false
    private var stopped = false

    /// - Parameters:
    ///   - linger: how long the writer waits for more lines after the first of a batch. 10 ms:
    ///     at 1 ms the writer's thousand wake-ups a second (each a futex wait, a `write(2)` and a
    ///     context switch on a busy core) cost the token fetch ~5 % of its throughput
    ///     (docs/benchmarks.md).
    ///   - capacity: pending bytes at which `append` starts waiting.
    public init(name: String, linger: Duration = .milliseconds(10), capacity: Int = 4 << 20, sink: @escaping Sink) {
        self.sink = sink
        let (seconds, attoseconds) = linger.components
        lingerNanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        self.capacity = capacity
        // The request threads and the writer hold it only for a copy or a swap.
        mutex = allocateAdaptiveMutex()
        work = Self.makeCondition()
        progress = Self.makeCondition()
        pending.reserveCapacity(64 << 10)
        let thread = Thread { [self] in writerLoop() }
        thread.name = name
        thread.start()
    }

    deinit {
        pthread_cond_destroy(work)
        pthread_cond_destroy(progress)
        pthread_mutex_destroy(mutex)
        work.deallocate()
        progress.deallocate()
        mutex.deallocate()
    }

    /// Queues `line` (complete, newline included). Callers build the line before this takes the
    /// mutex, which is held only for the copy: lines built under it made the two libmicrohttpd
    /// workers queue behind each other's formatting (about 2 µs a line), and the token route lost
    /// a quarter of its throughput. Waits only while `capacity` bytes are pending. After `close`,
    /// the line is handed to the sink on the calling thread.
    public func append(_ line: [UInt8]) {
        line.withUnsafeBufferPointer { append($0) }
    }

    /// Queues `line`, as `append(_: [UInt8])` does, from memory the caller keeps (a line built on
    /// the stack).
    public func append(_ line: UnsafeBufferPointer<UInt8>) {
        pthread_mutex_lock(mutex)
        while pending.count >= capacity, !stopped { pthread_cond_wait(progress, mutex) }
        if stopped {
            pthread_mutex_unlock(mutex)
            sink(Array(line), 1)
            return
        }
        pending.append(contentsOf: line)
        pendingLines += 1
        appended += 1
        if writerIdle { pthread_cond_signal(work) }
        pthread_mutex_unlock(mutex)
    }

    /// Returns when every line appended before the call has been handed to the sink.
    public func flush() {
        pthread_mutex_lock(mutex)
        let target = appended
        if written < target {
            flushWanted = max(flushWanted, target)
            pthread_cond_signal(work)
            while written < target, !stopped { pthread_cond_wait(progress, mutex) }
        }
        pthread_mutex_unlock(mutex)
    }

    /// Flushes and stops the writer thread; later lines are written synchronously.
    public func close() {
        pthread_mutex_lock(mutex)
        closing = true
        pthread_cond_signal(work)
        while !stopped { pthread_cond_wait(progress, mutex) }
        pthread_mutex_unlock(mutex)
    }

    /// The writer waits for a first line (nothing pending, no linger running), so the next
    /// `append` wakes it; tests wait for this state rather than for a guessed time.
    var isWaitingForLines: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return writerIdle
    }

    private func writerLoop() {
        var batch: [UInt8] = []
        batch.reserveCapacity(64 << 10)
        pthread_mutex_lock(mutex)
        while true {
            // After a batch, the next lines are waited for one `linger`, unwoken.
            var lingered = false
            if pending.isEmpty, !closing, lingerNanoseconds > 0 {
                var deadline = Self.deadline(afterNanoseconds: lingerNanoseconds)
                pthread_cond_timedwait(work, mutex, &deadline)
                lingered = true
            }
            while pending.isEmpty, !closing {
                writerIdle = true
                pthread_cond_wait(work, mutex)
                writerIdle = false
                lingered = false
            }
            if pending.isEmpty, closing { break }
            // Linger for company, unless this batch has lingered already, a flush or close is
            // waiting or the buffer is filling up.
            if !lingered, lingerNanoseconds > 0, flushWanted <= written, !closing, pending.count < capacity / 2 {
                var deadline = Self.deadline(afterNanoseconds: lingerNanoseconds)
                pthread_cond_timedwait(work, mutex, &deadline)
            }
            swap(&batch, &pending)
            let lines = pendingLines
            pendingLines = 0
            let through = appended
            pthread_cond_broadcast(progress)
            pthread_mutex_unlock(mutex)

            sink(batch, lines)
            batch.removeAll(keepingCapacity: true)

            pthread_mutex_lock(mutex)
            written = through
            pthread_cond_broadcast(progress)
        }
        stopped = true
        pthread_cond_broadcast(progress)
        pthread_mutex_unlock(mutex)
    }

    private static func makeCondition() -> UnsafeMutablePointer<pthread_cond_t> {
        let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
        return condition
    }

    private static func deadline(afterNanoseconds nanoseconds: Int) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let total = Int(now.tv_nsec) + nanoseconds
        return timespec(tv_sec: now.tv_sec + total / 1_000_000_000, tv_nsec: total % 1_000_000_000)
    }
}
