import KeychainConcurrency

/// The request families of `/metrics`, counted by `KeychainApplication` for every request:
/// `keychaind_http_requests_total{route,method,status}` and the latency histogram
/// `keychaind_http_request_duration_seconds{route}`. Each request thread counts in its own
/// shard (one lookup by route under a lock no other thread takes but `render`), and `render`
/// adds the shards up; labels are bounded: route patterns (`unmatched` for unknown paths), known
/// methods (else `OTHER`) and status codes.
public final class RequestMetrics: Sendable {
    /// Upper bounds of the latency buckets, in seconds.
    public static let buckets: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    /// Requests of one method and status.
    struct RequestCount {
        let method: String
        let status: Int
        var count: UInt64
    }

    struct Histogram {
        var counts = [UInt64](repeating: 0, count: RequestMetrics.buckets.count)
        var sum: Double = 0
        var count: UInt64 = 0
    }

    /// One route's counts. A route sees few methods and statuses, so they are searched in order
    /// (cheaper than hashing a key).
    struct RouteCounts {
        var requests: [RequestCount] = []
        var latency = Histogram()
    }

    /// By route pattern, one shard per request thread: one shared table cost every request a
    /// contended lock and cache misses (docs/decisions.md, "Per-thread state").
    private let shards = PerThread { PThreadLocked<[String: RouteCounts]>([:]) }

    public init() {}

    public func record(route: String, method: HTTPMethod, status: Int, seconds: Double) {
        let method = Auditor.methodLabel(method)
        // The bucket is found outside the lock.
        let bucket = Self.buckets.firstIndex { seconds <= $0 }
        shards.current.withLock { routes in
            routes[route, default: RouteCounts()].record(method: method, status: status, bucket: bucket, seconds: seconds)
        }
    }

    /// Every shard's counts added up, by route pattern.
    private func totals() -> [String: RouteCounts] {
        var totals: [String: RouteCounts] = [:]
        for shard in shards.instances {
            for (route, counts) in shard.withLock({ $0 }) {
                totals[route, default: RouteCounts()].add(counts)
            }
        }
        return totals
    }

    /// Appends both families in the text exposition format 0.0.4.
    public func render(into text: inout PrometheusText) {
        let snapshot = totals().sorted { $0.key < $1.key }
        text.family("keychaind_http_requests_total", type: "counter", help: "HTTP requests by route pattern, method and status.")
        for (route, counts) in snapshot {
            for request in counts.requests.sorted(by: { ($0.method, $0.status) < ($1.method, $1.status) }) {
                text.sample(
                    "keychaind_http_requests_total",
                    labels: [("route", route), ("method", request.method), ("status", String(request.status))],
                    request.count)
            }
        }
        text.family(
            "keychaind_http_request_duration_seconds", type: "histogram",
            help: "Time from routing to the response, by route pattern.")
        let bounds = Self.buckets.map(PrometheusText.format)
        for (route, counts) in snapshot {
            let histogram = counts.latency
            text.histogram(
                "keychaind_http_request_duration_seconds", labels: [("route", route)], bounds: bounds,
                counts: histogram.counts, count: histogram.count, sum: histogram.sum)
        }
    }
}

extension RequestMetrics.RouteCounts {
    mutating func record(method: String, status: Int, bucket: Int?, seconds: Double) {
        count(RequestMetrics.RequestCount(method: method, status: status, count: 1))
        latency.record(bucket: bucket, seconds: seconds)
    }

    mutating func add(_ other: Self) {
        for request in other.requests { count(request) }
        latency.add(other.latency)
    }

    /// Adds `request.count` to its method and status.
    private mutating func count(_ request: RequestMetrics.RequestCount) {
        if let index = requests.firstIndex(where: { $0.status == request.status && $0.method == request.method }) {
            requests[index].count += request.count
        } else {
            requests.append(request)
        }
    }
}

extension RequestMetrics.Histogram {
    mutating func record(bucket: Int?, seconds: Double) {
        if let bucket { counts[bucket] += 1 }
        sum += seconds
        count += 1
    }

    mutating func add(_ other: Self) {
        for index in counts.indices { counts[index] += other.counts[index] }
        sum += other.sum
        count += other.count
    }
}

/// Builds a Prometheus text exposition (format 0.0.4).
public struct PrometheusText: Sendable {
    public private(set) var text = ""

    public init() {}

    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    public mutating func family(_ name: String, type: String, help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    public mutating func sample(_ name: String, labels: [(String, String)] = [], _ value: UInt64) {
        sample(name, labels: labels, formatted: String(value))
    }

    public mutating func sample(_ name: String, labels: [(String, String)] = [], _ value: Double) {
        sample(name, labels: labels, formatted: Self.format(value))
    }

    private mutating func sample(_ name: String, labels: [(String, String)], formatted: String) {
        text += name
        if !labels.isEmpty {
            text += "{"
            text += labels.map { "\($0.0)=\"\(Self.escape($0.1))\"" }.joined(separator: ",")
            text += "}"
        }
        text += " \(formatted)\n"
    }

    /// One histogram's samples: `_bucket` for each of `bounds` (cumulative over `counts`, which
    /// are per bucket) and `+Inf`, `_sum` and `_count`, each with `labels` besides `le`.
    public mutating func histogram(
        _ name: String, labels: [(String, String)] = [], bounds: [String], counts: [UInt64], count: UInt64,
        sum: Double
    ) {
        var cumulative: UInt64 = 0
        for (bound, inBucket) in zip(bounds, counts) {
            cumulative += inBucket
            sample(name + "_bucket", labels: labels + [("le", bound)], cumulative)
        }
        sample(name + "_bucket", labels: labels + [("le", "+Inf")], count)
        sample(name + "_sum", labels: labels, sum)
        sample(name + "_count", labels: labels, count)
    }

    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        return "\(value)"
    }

    /// Label values escape backslash, double quote and newline.
    static func escape(_ value: String) -> String {
        guard value.contains(where: { $0 == "\\" || $0 == "\"" || $0 == "\n" }) else { return value }
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
