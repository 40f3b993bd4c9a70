import Foundation
import Testing

/// Issue 9's counts: small in CI, the full counts with `KEYCHAIND_HARDENING=full`
/// (docs/reliability.md). Figures are printed as `hardening: ...` lines.
enum Hardening {
    static let full = ProcessInfo.processInfo.environment["KEYCHAIND_HARDENING"] == "full"

    static func count(ci: Int, full fullCount: Int) -> Int { full ? fullCount : ci }

    static func report(_ line: String) {
        FileHandle.standardError.write(Data("hardening: \(line)\n".utf8))
    }

    /// The resident set of a process in KiB (VmRSS in /proc/<pid>/status).
    static func rssKiB(_ pid: Int32) -> Int { statusKiB(pid, "VmRSS") }

    /// The largest resident set a process has had so far, in KiB (VmHWM in /proc/<pid>/status).
    static func peakRSSKiB(_ pid: Int32) -> Int { statusKiB(pid, "VmHWM") }

    private static func statusKiB(_ pid: Int32, _ field: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
        else { return -1 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }

    /// The client ports of the TCP connections process `pid` holds (the peers of the sockets
    /// among its file descriptors, from /proc): the connections a server has accepted, not those
    /// still waiting in its listen backlog nor those it has closed.
    static func connectedPeerPorts(_ pid: Int32) -> Set<UInt16> {
        let descriptors = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: descriptors)) ?? []
        let socketInodes = Set(names.compactMap { name -> Substring? in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(descriptors)/\(name)"),
                target.hasPrefix("socket:[")
            else { return nil }
            return Substring(target).dropFirst("socket:[".count).dropLast()
        })
        // Lines of "sl local_address rem_address st ... uid timeout inode ...", addresses as HEX:PORT.
        // Read to the end: the file has no size, and String(contentsOfFile:) stops after a page.
        let url = URL(fileURLWithPath: "/proc/\(pid)/net/tcp")
        guard let table = (try? FileHandle(forReadingFrom: url).readToEnd()).flatMap({ $0 }) else { return [] }
        var ports: Set<UInt16> = []
        for line in String(decoding: table, as: UTF8.self).split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 9, socketInodes.contains(fields[9]),
                let port = fields[2].split(separator: ":").last.flatMap({ UInt16($0, radix: 16) }), port != 0
            else { continue }
            ports.insert(port)
        }
        return ports
    }

    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
    }

    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Raises this process's open-file limit to its hard limit (for many client sockets).
    static func raiseFileLimit() -> Int {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return Int(limit.rlim_cur)
    }

    /// Runs `body` on `threads` threads at once and waits for all of them.
    static func concurrently(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for index in 0..<threads {
            group.enter()
            Thread {
                body(index)
                group.leave()
            }.start()
        }
        group.wait()
    }
}

/// A client of the live server with its own token for items in group `group`.
extension LoopbackKeychaind {
    func newClientToken(_ name: String, groups: [String]) throws -> String {
        let answer = try client().json(
            "POST", "/v1/admin/clients", ["name": name, "accessGroups": groups], token: try adminToken())
        guard answer.status == 201, let token = answer.json["token"] as? String else {
            throw ProcessFailure(description: "cannot create client \(name): \(answer.status) \(answer.text)")
        }
        return token
    }
}

extension KeychaindProcess {
    var pid: Int32 { process.processIdentifier }
}

/// Thread-safe collection of results from client threads.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
