import Foundation
import KeychainCore
import KeychainStore
import KeychainSQLite
import Logging
import Synchronization

// StorageBench [items...]: crypto throughput, point-read latency at each item count, durable
// adds per second, and pool vs single connection under 4 reader threads.
// StorageBench populate DIR N: the documented bulk path for large vaults — initialises DIR if
// needed and adds N generic passwords (service-i / account-i, group "admin", 64-byte secrets) in
// transactions of 10,000, for `bench/scale-bench.sh`.
// StorageBench read DIR N [READS]: point reads at random over a vault that `populate` filled with N
// items, in process (no HTTP): p50 and p99 of `ItemStore.find`, to tell the store's share of a read.

let logger = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
func report(_ line: String) { print(line); fflush(nil) }

func makeDirectory() throws -> DataDirectory {
    let path = NSTemporaryDirectory() + "keychaind-bench-" + UUID().uuidString
    let directory = DataDirectory(path: path)
    try directory.initialize(logger: logger)
    return directory
}

func genp(_ index: Int) -> Item { genp(index, group: "bench") }

func genp(_ index: Int, group: String) -> Item {
    let now = Date()
    return Item(
        itemClass: .genericPassword, persistentRef: .random(),
        attributes: [
            .accessGroup: .string(group), .service: .string("service-\(index)"), .account: .string("account-\(index)"),
            .synchronizable: .bool(false), .accessible: .string("whenUnlocked"), .creationDate: .date(now),
            .modificationDate: .date(now),
        ],
        secret: SecretBytes([UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 64)))
}

func filter(_ index: Int, group: String = "bench") -> ItemFilter {
    ItemFilter(
        itemClass: .genericPassword, accessGroups: [group],
        equal: [.service: .string("service-\(index)"), .account: .string("account-\(index)"), .synchronizable: .bool(false)])
}

/// Adds `count` items to the data directory at `path` (initialised first when empty).
func populate(path: String, count: Int) throws {
    let directory = DataDirectory(path: path)
    if !directory.isInitialized { try directory.initialize(logger: logger) }
    let vault = try directory.open(logger: logger)
    defer { vault.close() }
    let started = Date()
    var index = 0
    while index < count {
        let batch = min(10_000, count - index)
        try vault.items.add((index..<(index + batch)).map { genp($0, group: "admin") })
        index += batch
    }
    report(String(format: "populated %@ with %d items in %.1f s", path, count, Date().timeIntervalSince(started)))
}

if CommandLine.arguments.dropFirst().first == "populate" {
    let arguments = Array(CommandLine.arguments.dropFirst(2))
    guard arguments.count == 2, let count = Int(arguments[1]) else {
        report("usage: StorageBench populate DIR COUNT")
        exit(2)
    }
    try populate(path: arguments[0], count: count)
    exit(0)
}

func percentile(_ sorted: [Double], _ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }

/// `reads` point reads by service+account, with the secret, of random items among the first
/// `count` (made by `genp` in `group`); reports p50 and p99 and returns the p50, in µs.
@discardableResult
func measurePointReads(_ items: any ItemStore, count: Int, group: String, reads: Int) throws -> Double {
    var latencies: [Double] = []
    latencies.reserveCapacity(reads)
    for _ in 0..<reads {
        let i = Int.random(in: 0..<count)
        let start = DispatchTime.now().uptimeNanoseconds
        let page = try items.find(filter(i, group: group), limit: 1, after: nil, reading: .all)
        let end = DispatchTime.now().uptimeNanoseconds
        precondition(page.items.count == 1 && page.items[0].secret?.count == 64)
        latencies.append(Double(end - start) / 1000)
    }
    latencies.sort()
    report(String(format: "point read by service+account with secret, %d items: p50 %.1f µs, p99 %.1f µs (%d reads)",
                  count, percentile(latencies, 0.5), percentile(latencies, 0.99), reads))
    return percentile(latencies, 0.5)
}

if CommandLine.arguments.dropFirst().first == "read" {
    let arguments = Array(CommandLine.arguments.dropFirst(2))
    guard (2...3).contains(arguments.count), let count = Int(arguments[1]), let reads = Int(arguments.count == 3 ? arguments[2] : "100000")
    else {
        report("usage: StorageBench read DIR COUNT [READS]")
        exit(2)
    }
    let vault = try DataDirectory(path: arguments[0]).open(logger: logger)
    try measurePointReads(vault.items, count: count, group: "admin", reads: reads)
    vault.close()
    exit(0)
}

let counts = CommandLine.arguments.dropFirst().compactMap(Int.init)
let itemCounts = counts.isEmpty ? [1_000, 1_000_000] : counts

let sealOpen = try SealingBench.sealOpenPerSecond(size: 64, seconds: 3)
report(String(format: "seal+open 64-byte secrets (1 thread, reused EVP ctx, with AAD): %.0f pairs/s", sealOpen))
let sealOnly = try SealingBench.sealPerSecond(size: 64, seconds: 3)
report(String(format: "seal only, 64-byte secrets (fresh RAND_bytes nonce, AAD built per box): %.0f seals/s", sealOnly))

var p50s: [Int: Double] = [:]
var largest: DataDirectory?
for n in itemCounts {
    let directory = try makeDirectory()
    let vault = try directory.open(logger: logger)
    let setupStart = Date()
    var index = 0
    while index < n {
        let batch = min(10_000, n - index)
        try vault.items.add((index..<(index + batch)).map(genp))
        index += batch
    }
    report(String(format: "setup %d items in batches of 10,000: %.1f s", n, Date().timeIntervalSince(setupStart)))
    p50s[n] = try measurePointReads(vault.items, count: n, group: "bench", reads: 20_000)
    vault.close()
    if n == itemCounts.max() { largest = directory } else { try? FileManager.default.removeItem(atPath: directory.path) }
}
if let small = itemCounts.min(), let large = itemCounts.max(), small != large, let a = p50s[small], let b = p50s[large] {
    report(String(format: "p50 ratio %d / %d items: %.2f (target ≤ 1.3)", large, small, b / a))
}

// Durable single-item adds (each its own transaction, synchronous=FULL).
do {
    let directory = try makeDirectory()
    let vault = try directory.open(logger: logger)
    let adds = 2_000
    let start = Date()
    for i in 0..<adds { try vault.items.add([genp(i)]) }
    let elapsed = Date().timeIntervalSince(start)
    report(String(format: "durable single-item adds: %.0f adds/s (%d adds, %.2f s)", Double(adds) / elapsed, adds, elapsed))
    vault.close()
    try? FileManager.default.removeItem(atPath: directory.path)
}

// Reader pool vs one connection, 4 threads of point reads for 3 s each.
if let directory = largest, let n = itemCounts.max() {
    for readers in [4, 0] {
        let vault = try directory.open(logger: logger, readers: readers)
        let deadline = Date().addingTimeInterval(3)
        let total = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            var done = 0
            while Date() < deadline {
                for _ in 0..<100 {
                    _ = try? vault.items.find(filter(Int.random(in: 0..<n)), limit: 1, after: nil, reading: .all)
                }
                done += 100
            }
            total.withLock { $0 += done }
        }
        report(String(format: "4 threads of point reads, %@: %.0f reads/s", readers == 0 ? "single connection" : "pool of \(readers) readers + writer",
                      Double(total.withLock { $0 }) / 3))
        vault.close()
    }
    try? FileManager.default.removeItem(atPath: directory.path)
}
