internal import CMicroHTTPD
import Foundation
import Logging
import Synchronization

/// Closes a connection whose request line and headers have not all arrived `seconds` after the
/// request's first byte, however slowly the bytes trickle in (slowloris). libmicrohttpd's idle
/// timeout restarts with every byte and it has no deadline for the header section, so a sweep
/// thread checks the connections that are waiting for a request:
///
/// - A connection *waits* from its accept, and again from the completion of each request; from
///   the first access-handler call (its headers are complete) to that completion it is
///   *answering* and not checked (a request's body and its answer are outside this deadline).
/// - The first byte of a waiting connection's next request is seen in the kernel's TCP_INFO (the
///   time since data was last received): the first sweep that finds data newer than the moment
///   the connection began to wait takes that time as the request's start, which is never earlier
///   than the real first byte. Once `seconds` have passed since, the socket is shut down, which
///   libmicrohttpd handles like a peer that went away. A connection that sends nothing is left
///   to the idle timeout; over HTTPS the TLS handshake is the first request's first bytes.
/// - libmicrohttpd notifies a connection's close before it closes the socket, and that
///   notification takes the same lock as the sweep, so the sweep never shuts down a descriptor
///   that has been closed and reused.
final class HeaderDeadline: Sendable {
    /// One TCP connection, held by libmicrohttpd as the connection's socket context.
    final class Connection: Sendable {
        static let answering: Int64 = -1
        let descriptor: Int32
        /// The peer's address, formatted once for all the connection's requests.
        let remoteAddress: String?
        /// The monotonic millisecond since which the connection has waited for a request, or
        /// `answering`. Written by the connection's worker thread, read by the sweep.
        let waitingSince: Atomic<Int64>

        init(descriptor: Int32, remoteAddress: String?, waitingSince: Int64) {
            self.descriptor = descriptor
            self.remoteAddress = remoteAddress
            self.waitingSince = Atomic(waitingSince)
        }
    }

    /// What the sweep knows of one connection.
    private struct Watch {
        let connection: Connection
        /// The `waitingSince` that `requestStartedAt` belongs to.
        var waitingSince: Int64
        var requestStartedAt: Int64?
        var shutDown = false
    }

    /// Data the kernel stamps within this many milliseconds after a connection began to wait is
    /// taken as the previous request's (TCP_INFO counts in jiffies, up to 10 ms apart).
    private static let clockSlackMilliseconds: Int64 = 50

    let seconds: Int
    private let logger: Logger
    private let watches = Mutex<[ObjectIdentifier: Watch]>([:])
    private let stopRequested = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)

    init(seconds: Int, logger: Logger) {
        self.seconds = seconds
        self.logger = logger
    }

    /// Monotonic milliseconds (CLOCK_MONOTONIC, a vDSO call).
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    // MARK: Called from libmicrohttpd's worker threads

    func connectionStarted(descriptor: Int32, remoteAddress: String?) -> Connection {
        let connection = Connection(descriptor: descriptor, remoteAddress: remoteAddress, waitingSince: Self.now())
        let watch = Watch(connection: connection, waitingSince: connection.waitingSince.load(ordering: .relaxed))
        watches.withLock { $0[ObjectIdentifier(connection)] = watch }
        return connection
    }

    func connectionClosed(_ connection: Connection) {
        _ = watches.withLock { $0.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    // MARK: The sweep

    /// Starts the sweep thread: every quarter of the deadline, at most every second.
    func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let interval = min(1.0, Double(seconds) / 4)
        let thread = Thread { [self] in
            while stopRequested.wait(timeout: .now() + interval) == .timedOut { sweep() }
            finished.signal()
        }
        thread.name = "kc-header-sweep"
        thread.start()
    }

    /// Stops the sweep thread and waits for it. Idempotent.
    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        stopRequested.signal()
        finished.wait()
    }

    private func sweep() {
        let now = Self.now()
        let deadline = Int64(seconds) * 1000
        let closed = watches.withLock { watches -> Int in
            var closed = 0
            for index in watches.values.indices {
                var watch = watches.values[index]
                let waitingSince = watch.connection.waitingSince.load(ordering: .relaxed)
                guard waitingSince != Connection.answering, !watch.shutDown else { continue }
                if watch.waitingSince != waitingSince {
                    watch.waitingSince = waitingSince
                    watch.requestStartedAt = nil
                }
                if watch.requestStartedAt == nil {
                    let sinceData = CMicroHTTPD_milliseconds_since_data(watch.connection.descriptor)
                    if sinceData >= 0, now - sinceData > waitingSince + Self.clockSlackMilliseconds {
                        watch.requestStartedAt = now - sinceData
                    }
                }
                if let started = watch.requestStartedAt, now - started >= deadline {
                    shutdown(watch.connection.descriptor, Int32(SHUT_RDWR))
                    watch.shutDown = true
                    closed += 1
                }
                watches.values[index] = watch
            }
            return closed
        }
        if closed > 0 {
            logger.notice("closed \(closed) connection(s) whose request headers did not arrive within \(seconds) s")
        }
    }
}
