import Foundation
import Testing

/// Issue 29, item 3: many connections from one address that trickle their headers (a header line
/// now and then, never the blank line) must neither take every connection slot nor be held
/// forever. The attacker connects from 127.0.0.2, everyone else from 127.0.0.1.
@Suite(.serialized)
struct SlowlorisTests {
    static let attacker = "127.0.0.2"

    @Test func tricklingSocketsFromOneAddressDoNotStopOthersBeingServed() throws {
        // CI: a smaller connection limit with more sockets than it; full: the 1,030
        // sockets against the default limit of 1,024.
        let connectionLimit = Hardening.count(ci: 256, full: 1024)
        let count = connectionLimit + Hardening.count(ci: 44, full: 6)
        let fileLimit = Hardening.raiseFileLimit()
        try #require(fileLimit > 2 * count + 100, "open-file limit \(fileLimit) is below \(count) connections")
        let server = try KeychaindProcess(environment: ["KEYCHAIND_LIMITS_MAX_CONNECTIONS": "\(connectionLimit)"])
        defer { server.stop() }

        let sockets = try (0..<count).map { _ in try TricklingSocket(port: server.port, source: Self.attacker) }
        for socket in sockets { socket.send("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n") }
        let stop = Locked(false)
        let trickler = Thread {
            var line = 0
            while !stop.withLock({ $0 }) {
                for socket in sockets { socket.send("X-Trickle-\(line): x\r\n") }
                line += 1
                Thread.sleep(forTimeInterval: 1)
            }
        }
        trickler.start()
        defer { stop.withLock { $0 = true } }
        Thread.sleep(forTimeInterval: 1.5)
        let held = sockets.filter(\.isOpen).count
        Hardening.report("slowloris: \(count) trickling sockets from \(Self.attacker), limits.maxConnections = \(connectionLimit): server holds \(held)")

        // Another address is answered while they trickle (a bounded wait: over the connection
        // limit a new connection waits in the listen backlog, unanswered).
        for _ in 0..<3 {
            let probe = try TestConnection(port: server.port, timeoutSeconds: 10)
            try probe.write(HTTPTestClient.head("GET", "/v1/health", headers: [:], bodyLength: nil))
            #expect(try probe.readResponse().status == 200)
            Thread.sleep(forTimeInterval: 0.5)
        }
        #expect(held <= 128, "one address holds at most limits.maxConnectionsPerAddress (128) connections, not \(held)")
        withExtendedLifetime(sockets) {}
    }

    @Test func aConnectionTricklingItsHeadersIsClosedAtTheDeadline() throws {
        let server = try KeychaindProcess(environment: ["KEYCHAIND_LIMITS_HEADER_TIMEOUT_SECONDS": "2"])
        defer { server.stop() }
        let head = HTTPTestClient.head("GET", "/v1/health", headers: [:], bodyLength: nil)

        // A request line and then a header line every quarter second: each byte would restart
        // the 30 s idle timeout, the header deadline closes it anyway.
        let trickling = try TricklingSocket(port: server.port, source: Self.attacker)
        let closedAfter = try trickling.trickleUntilClosed(within: 15)
        Hardening.report(String(format: "slowloris: a trickling connection with limits.headerTimeoutSeconds = 2 closed after %.2f s", closedAfter))
        #expect(closedAfter >= 2, "not before the deadline")
        #expect(server.logShows("closed 1 connection(s) whose request headers did not arrive within 2 s"))

        // A kept-alive connection may stay silent past the deadline (the idle timeout governs
        // silence); its next request's headers are timed from their own first byte.
        let keptAlive = try TestConnection(port: server.port, timeoutSeconds: 10)
        try keptAlive.write(head)
        #expect(try keptAlive.readResponse().status == 200)
        Thread.sleep(forTimeInterval: 3)
        try keptAlive.write(head)
        #expect(try keptAlive.readResponse().status == 200, "a silent keep-alive connection is not cut by the header deadline")

        // A request sent in pieces inside the deadline is answered.
        let pieces = try TestConnection(port: server.port, timeoutSeconds: 10)
        try pieces.write("GET /v1/health HTTP/1.1\r\n")
        Thread.sleep(forTimeInterval: 0.5)
        try pieces.write("Host: 127.0.0.1\r\n\r\n")
        #expect(try pieces.readResponse().status == 200)

        // After a complete request, a trickled second one is cut off as well.
        let second = try TricklingSocket(port: server.port, source: Self.attacker)
        second.send(String(decoding: head, as: UTF8.self))
        Thread.sleep(forTimeInterval: 0.5)
        let secondClosedAfter = try second.trickleUntilClosed(within: 15)
        #expect(secondClosedAfter >= 2)
        #expect(try server.client().send("GET", "/v1/health").status == 200)
    }
}

/// A client socket for slow attacks: connects from `source` (a loopback address), sends without
/// blocking and tells whether the server has closed the connection without waiting.
final class TricklingSocket: @unchecked Sendable {
    // @unchecked: the descriptor is only written in init; send and poll are safe from any thread.
    private let descriptor: Int32

    init(port: UInt16, source: String) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ProcessFailure(description: "socket() failed: errno \(errno)") }
        func address(_ host: String, _ port: UInt16) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr(host)
            return address
        }
        var local = address(source, 0)
        var remote = address("127.0.0.1", port)
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, size) } }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, size) }
        }
        guard bound == 0, connected == 0 else {
            close(descriptor)
            throw ProcessFailure(description: "cannot connect from \(source) to 127.0.0.1:\(port): errno \(errno)")
        }
    }

    deinit { close(descriptor) }

    /// Sends what the socket buffer takes now; a closed connection is not an error here.
    func send(_ text: String) {
        _ = text.utf8CString.withUnsafeBufferPointer { bytes in
            Foundation.send(descriptor, bytes.baseAddress, bytes.count - 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
    }

    /// False once the server has closed the connection (end of stream or reset). Answers that
    /// arrived are read and dropped, so that the end of stream behind them shows.
    var isOpen: Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let received = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if received > 0 { continue }
            return received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
        }
    }

    /// Sends a request line, then a header line every quarter second until the server closes
    /// the connection; returns the seconds that took, or throws after `limit` seconds.
    func trickleUntilClosed(within limit: Double) throws -> Double {
        let started = Hardening.now()
        send("GET /v1/health HTTP/1.1\r\n")
        var line = 0
        while isOpen {
            guard Hardening.now() - started < limit else {
                throw ProcessFailure(description: "still open after \(limit) s of trickling")
            }
            Thread.sleep(forTimeInterval: 0.25)
            send("X-Trickle-\(line): x\r\n")
            line += 1
        }
        return Hardening.now() - started
    }
}
