#if canImport(Glibc)
import Glibc
#endif
import KeychainConcurrency
import Synchronization

/// A budget of events per client address: a token bucket of `perMinute` events per address,
/// refilled continuously, so that one address cannot make the server do (or write) more than
/// that, while other addresses keep their own. The failed-auth limit (`AuthFailureLimiter`) and
/// the audit lines of unauthenticated requests are budgeted this way.
///
/// Memory is bounded: at most `maxAddresses` buckets. A full table first drops buckets that have
/// refilled (equal to no bucket); addresses that still find no room share one overflow bucket,
/// so a flood from many addresses is limited as a whole rather than growing the table. IPv6
/// addresses are counted per /64, the block one host is usually given.
public final class AddressBudget: Sendable {
    public let perMinute: Int
    public let maxAddresses: Int
    private let now: @Sendable () -> Double
    private let state: PThreadLocked<State>
    private let refused = Atomic<UInt64>(0)

    struct Bucket {
        var tokens: Double
        var updated: Double
    }

    struct State {
        var buckets: [String: Bucket] = [:]
        var overflow: Bucket?
        var lastSweep = -Double.infinity
    }

    /// `now`: monotonic seconds (tests pass a clock they move).
    public init(perMinute: Int, maxAddresses: Int, now: @escaping @Sendable () -> Double = AddressBudget.monotonicSeconds) {
        precondition(perMinute > 0 && maxAddresses > 0)
        self.perMinute = perMinute
        self.maxAddresses = maxAddresses
        self.now = now
        state = PThreadLocked(State())
    }

    private var refillPerSecond: Double { Double(perMinute) / 60 }
    private var capacity: Double { Double(perMinute) }

    /// Spends one event of `address`'s budget (nil: unknown, counted together). Returns nil when
    /// it was within the budget, or the whole seconds until one is back (the event is refused,
    /// and counted in `refusals`).
    public func spend(from address: String?) -> Int? {
        let key = Self.key(for: address)
        let time = now()
        let wait = state.withLock { state -> Int? in
            var bucket: Bucket
            var isOverflow = false
            if let existing = state.buckets[key] {
                bucket = existing
            } else {
                if state.buckets.count >= maxAddresses { sweep(&state, at: time) }
                if state.buckets.count >= maxAddresses {
                    isOverflow = true
                    bucket = state.overflow ?? Bucket(tokens: capacity, updated: time)
                } else {
                    bucket = Bucket(tokens: capacity, updated: time)
                }
            }
            bucket.tokens = min(capacity, bucket.tokens + max(0, time - bucket.updated) * refillPerSecond)
            bucket.updated = time
            var wait: Int?
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
            } else {
                wait = max(1, Int(((1 - bucket.tokens) / refillPerSecond).rounded(.up)))
            }
            if isOverflow { state.overflow = bucket } else { state.buckets[key] = bucket }
            return wait
        }
        if wait != nil { refused.add(1, ordering: .relaxed) }
        return wait
    }

    /// Whether the next event from `address` would be refused (nothing is spent).
    public func isSpent(for address: String?) -> Bool {
        let key = Self.key(for: address)
        let time = now()
        return state.withLock { state in
            guard let bucket = state.buckets[key] ?? (state.buckets.count >= maxAddresses ? state.overflow : nil) else {
                return false
            }
            return min(capacity, bucket.tokens + max(0, time - bucket.updated) * refillPerSecond) < 1
        }
    }

    /// Events refused since start, past their address's budget.
    public var refusals: UInt64 { refused.load(ordering: .relaxed) }

    /// How many addresses have a bucket (for tests and the reliability figures).
    public var trackedAddresses: Int { state.withLock { $0.buckets.count } }

    /// Drops buckets that have refilled, at most once a second (a sweep is O(table)).
    private func sweep(_ state: inout State, at time: Double) {
        guard time - state.lastSweep >= 1 else { return }
        state.lastSweep = time
        let capacity = self.capacity, rate = refillPerSecond
        state.buckets = state.buckets.filter { _, bucket in
            bucket.tokens + (time - bucket.updated) * rate < capacity
        }
    }

    /// The bucket key: the address itself, or for IPv6 its /64 prefix (IPv4-mapped IPv6 as IPv4).
    static func key(for address: String?) -> String {
        guard let address, !address.isEmpty else { return "-" }
        guard address.contains(":") else { return address }
        var bytes = [UInt8](repeating: 0, count: 16)
        guard inet_pton(AF_INET6, address, &bytes) == 1 else { return address }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return bytes[12..<16].map(String.init).joined(separator: ".")
        }
        let hex = "0123456789abcdef".map { $0 }
        var text = ""
        for (index, byte) in bytes[0..<8].enumerated() {
            if index > 0, index % 2 == 0 { text += ":" }
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return text + "::/64"
    }

    public static func monotonicSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000
    }
}
