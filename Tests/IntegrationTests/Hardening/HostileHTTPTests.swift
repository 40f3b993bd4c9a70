import Foundation
import KeychaindTesting
import Testing

/// Issue 9, hostile HTTP: ambiguous framing, oversized request lines, headers and query strings,
/// thousands of parameters, NUL and invalid UTF-8, deep and huge JSON, slow clients and many idle
/// connections. Each gets a clean 4xx (in the error shape when keychaind answers; libmicrohttpd's
/// own 414/431 refusals carry its HTML body) or a closed connection; never a crash or an
/// unbounded wait, and the server's RSS stays bounded.
@Suite(.serialized)
final class HostileHTTPTests {
    enum Outcome {
        case answered(HTTPTestClient.Response)
        case closed(seconds: Double)
    }

    static let reported = Locked(Set<String>())

    /// Sends raw bytes on a new connection and reads one answer, or notes the close.
    static func exchange(_ port: UInt16, _ bytes: Data, timeout: Int = 10) throws -> Outcome {
        let started = Hardening.now()
        let connection = try TestConnection(port: port, timeoutSeconds: timeout)
        do {
            try connection.write(bytes)
            return .answered(try connection.readResponse())
        } catch {
            let elapsed = Hardening.now() - started
            if elapsed >= Double(timeout) - 0.5 { throw ProcessFailure(description: "no answer within \(timeout) s") }
            return .closed(seconds: elapsed)
        }
    }

    /// A 4xx in the error shape (or, when `transport`, libmicrohttpd's own 4xx), or a close.
    static func expectClean(
        _ outcome: Outcome, _ label: String, transport: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let quiet = reported.withLock { !$0.insert(label).inserted }  // each kind reported once
        switch outcome {
        case .closed(let seconds):
            if !quiet { Hardening.report("\(label): connection closed after \(String(format: "%.2f", seconds)) s") }
        case .answered(let response):
            if !quiet { Hardening.report("\(label): \(response.status) \(response.text.prefix(120))") }
            #expect((400..<500).contains(response.status), "\(label): \(response.status)", sourceLocation: sourceLocation)
            if !transport || response.headers["content-type"] == "application/json" {
                #expect(response.json["status"] is Int, "\(label): error shape", sourceLocation: sourceLocation)
                #expect(response.json["error"] is String, "\(label): error shape", sourceLocation: sourceLocation)
            }
        }
    }

    static func request(_ head: String, token: String? = nil, body: Data = Data()) -> Data {
        var text = head + "\r\nHost: 127.0.0.1\r\n"
        if let token { text += "Authorization: Bearer \(token)\r\n" }
        return Data(text.utf8) + body
    }

    @Test func hostileRequestsGetCleanAnswersAndMemoryStaysBounded() throws {
        // An idle timeout far beyond every exchange's own timeout: no connection here is closed by it.
        let server = try KeychaindProcess(environment: ["KEYCHAIND_LIMITS_IDLE_TIMEOUT_SECONDS": "60"])
        defer { server.stop() }
        let port = server.port
        let token = try server.newClientToken("hostile", groups: ["hostile"])
        let auth = "Authorization: Bearer \(token)\r\n"
        let rssBefore = Hardening.rssKiB(server.pid)
        let item = Data(#"{"service":"hostile","account":"a","value":"v"}"#.utf8)
        func post(_ headers: String, _ body: Data) -> Data {
            Data("POST /v1/items/genericPassword HTTP/1.1\r\nHost: 127.0.0.1\r\n\(auth)\(headers)\r\n".utf8) + body
        }
        let chunked = Data("\(String(item.count, radix: 16))\r\n".utf8) + item + Data("\r\n0\r\n\r\n".utf8)
        let smuggled = Data("GET /v1/admin/clients HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)

        for round in 0..<Hardening.count(ci: 1, full: 20) {
            // Framing: Content-Length with Transfer-Encoding, two Content-Lengths, unknown coding.
            for (label, bytes) in [
                ("CL+TE", post("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", chunked + smuggled)),
                ("TE+CL", post("Transfer-Encoding: chunked\r\nContent-Length: \(chunked.count)\r\n", chunked + smuggled)),
                ("two Content-Lengths", post("Content-Length: 5\r\nContent-Length: \(item.count)\r\n", item)),
                ("Transfer-Encoding gzip, chunked", post("Transfer-Encoding: gzip, chunked\r\n", chunked)),
            ] {
                let outcome = try Self.exchange(port, bytes)
                Self.expectClean(outcome, label)
                if case .answered(let response) = outcome { #expect(response.headers["connection"] == "close", "\(label)") }
            }
            // Oversized request line and headers: libmicrohttpd's 414/431 (its body), connection closed.
            let longPath = "/v1/items/genericPassword?service=" + String(repeating: "a", count: 200_000)
            Self.expectClean(try Self.exchange(port, Self.request("GET \(longPath) HTTP/1.1") + Data("\r\n".utf8)),
                             "200 KB URL", transport: true)
            Self.expectClean(
                try Self.exchange(port, Self.request("GET /health HTTP/1.1") + Data("X-Big: \(String(repeating: "b", count: 100_000))\r\n\r\n".utf8)),
                "100 KB header", transport: true)
            let manyHeaders = (0..<5000).map { "X-H\($0): v\r\n" }.joined()
            Self.expectClean(try Self.exchange(port, Self.request("GET /health HTTP/1.1") + Data((manyHeaders + "\r\n").utf8)),
                             "5000 headers", transport: true)
            // Long query string that fits: answered by keychaind (no such item).
            let longQuery = "/v1/items/genericPassword?service=" + String(repeating: "q", count: 20_000)
            Self.expectClean(try Self.exchange(port, Self.request("GET \(longQuery) HTTP/1.1", token: token) + Data("\r\n".utf8)),
                             "20 KB query value")
            // Hundreds of parameters (within limits.maxQueryParameters): errSecNoSuchAttr /
            // duplicate errSecParam.
            let params = (0..<250).map { "a\($0)=1" }.joined(separator: "&")
            Self.expectClean(try Self.exchange(port, Self.request("GET /v1/items/genericPassword?\(params) HTTP/1.1", token: token) + Data("\r\n".utf8)),
                             "250 unknown parameters")
            let duplicates = Array(repeating: "service=x", count: 250).joined(separator: "&")
            Self.expectClean(try Self.exchange(port, Self.request("GET /v1/items/genericPassword?\(duplicates) HTTP/1.1", token: token) + Data("\r\n".utf8)),
                             "250 duplicate parameters")
            // Thousands of parameters would overflow libmicrohttpd's per-connection pool (it then
            // neither answers nor reads on until the idle timeout): the query guard closes such a
            // connection as soon as the request line is read: within the exchange's 8 s, which
            // the 60 s idle timeout could not do.
            let thousands = (0..<3000).map { "a\($0)=1" }.joined(separator: "&")
            let overflow = try Self.exchange(
                port, Self.request("GET /v1/items/genericPassword?\(thousands) HTTP/1.1", token: token) + Data("\r\n".utf8), timeout: 8)
            Self.expectClean(overflow, "3000 parameters")
            // Invalid UTF-8 in the query string: errSecParam, not a repaired U+FFFD match.
            Self.expectClean(try Self.exchange(port, Self.request("GET /v1/items/genericPassword?service=%FF%FE HTTP/1.1", token: token) + Data("\r\n".utf8)),
                             "%FF in a query")
            // Bad JSON: invalid UTF-8, deep nesting, a large array; an over-limit body.
            let badUTF8 = Data(#"{"service":"x","account":""#.utf8) + Data([0xFF, 0xC0]) + Data(#"","value":"v"}"#.utf8)
            let deep = Data(String(repeating: "[", count: 100_000).utf8) + Data(String(repeating: "]", count: 100_000).utf8)
            let array = Data(("[" + Array(repeating: "1", count: 300_000).joined(separator: ",") + "]").utf8)
            let tooBig = Data(#"{"service":"x","value":""#.utf8) + Data(repeating: 0x61, count: 1_100_000) + Data(#""}"#.utf8)
            for (label, body) in [("invalid UTF-8 in JSON", badUTF8), ("JSON 100000 deep", deep),
                                  ("JSON array of 300000", array), ("1.1 MB body", tooBig)] {
                Self.expectClean(try Self.exchange(port, post("Content-Length: \(body.count)\r\n", body)), label)
            }
            if round == 0 { Hardening.report("hostile battery: RSS \(rssBefore) KiB before, \(Hardening.rssKiB(server.pid)) KiB after one round") }
        }
        let rssAfter = Hardening.rssKiB(server.pid)
        Hardening.report("hostile battery x\(Hardening.count(ci: 1, full: 20)): RSS \(rssBefore) KiB -> \(rssAfter) KiB")
        #expect(rssAfter - rssBefore < 64 * 1024, "RSS grew by \(rssAfter - rssBefore) KiB")
        // Still serving, and nothing was smuggled in or half-added.
        let health = try server.client().send("GET", "/health")
        #expect(health.status == 200)
        let listed = try server.client().send("GET", "/v1/items/genericPassword?limit=all", token: token)
        #expect(listed.status == 404, "no hostile request added an item: \(listed.text)")
        #expect(!server.log.contains("unexpected error"))
    }

    @Test func nulAndPercentEncodedBytesRoundTripExactly() throws {
        let server = try KeychaindProcess()
        defer { server.stop() }
        let http = server.client()
        let token = try server.newClientToken("nul", groups: ["nul"])
        // JSON \u0000 is kept whole (it was once cut at the NUL by the SQLite binding).
        let add = try http.json("POST", "/v1/items/genericPassword", ["service": "nul", "account": "a\u{0}b", "value": "with-nul"], token: token)
        #expect(add.status == 201, "\(add.text)")
        #expect((add.json["item"] as? [String: Any])?["account"] as? String == "a\u{0}b")
        let plain = try http.json("POST", "/v1/items/genericPassword", ["service": "nul", "account": "a", "value": "plain"], token: token)
        #expect(plain.status == 201, "\"a\" is another account than \"a\\0b\": \(plain.text)")
        // %00 in a query string matches the NUL account only (it was once cut to "a").
        let byNul = try http.send("GET", "/v1/items/genericPassword?service=nul&account=a%00b&return=data", token: token)
        #expect((byNul.json["item"] as? [String: Any])?["value"] as? String == "with-nul", "\(byNul.text)")
        let byPlain = try http.send("GET", "/v1/items/genericPassword?service=nul&account=a&return=data", token: token)
        #expect((byPlain.json["item"] as? [String: Any])?["value"] as? String == "plain")
        // An empty string is still a value, not NULL.
        #expect(try http.json("POST", "/v1/items/genericPassword", ["service": "nul", "account": "", "value": "empty"], token: token).status == 201)
        let byEmpty = try http.send("GET", "/v1/items/genericPassword?service=nul&account=&return=data", token: token)
        #expect((byEmpty.json["item"] as? [String: Any])?["value"] as? String == "empty", "\(byEmpty.text)")
        // %FF: not UTF-8, refused.
        let invalid = try http.send("DELETE", "/v1/items/genericPassword?service=nul&account=%FF", token: token)
        #expect(invalid.status == 400 && invalid.json["status"] as? Int == -50, "\(invalid.text)")
        let all = try http.send("GET", "/v1/items/genericPassword?service=nul&limit=all", token: token)
        #expect((all.json["items"] as? [Any])?.count == 3)
    }

    /// Slow clients (each sends a request head a byte a second and never finishes) hold their
    /// connections while a normal client makes its reads on another: every read is answered,
    /// each within the connection's 10 s receive timeout. How much the slow clients cost the
    /// others in latency is a measurement, bench/slow-clients-bench.sh's, not an assertion here.
    @Test func slowClientsDoNotStarveNormalClients() throws {
        let slowCount = Hardening.count(ci: 100, full: 500)
        let requests = Hardening.count(ci: 300, full: 2000)
        // All from 127.0.0.1, and held open for the whole measurement: no per-address limit and
        // no header deadline here (SlowlorisTests covers those).
        let server = try KeychaindProcess(environment: [
            "KEYCHAIND_LIMITS_MAX_CONNECTIONS": "\(slowCount + 64)", "KEYCHAIND_LIMITS_MAX_CONNECTIONS_PER_ADDRESS": "0",
            "KEYCHAIND_LIMITS_HEADER_TIMEOUT_SECONDS": "300",
        ])
        defer { server.stop() }
        let token = try server.newClientToken("normal", groups: ["normal"])
        #expect(try server.client().json("POST", "/v1/items/genericPassword", ["service": "slow", "value": "v"], token: token).status == 201)
        let rssIdle = Hardening.rssKiB(server.pid)

        nonisolated(unsafe) let slow = try (0..<slowCount).map { _ in try TestConnection(port: server.port) }
        for connection in slow { try connection.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ") }
        let slowPorts = Set(slow.map(\.localPort))
        try #require(
            waitUntil { slowPorts.isSubset(of: Hardening.connectedPeerPorts(server.pid)) },
            "the server accepts every slow connection")
        let stop = DispatchSemaphore(value: 0)
        let sender = WorkerThread(name: "slow clients") {
            // A byte a second on each, the header never ending: the pace is the point.
            while stop.wait(timeout: .now() + 1) == .timedOut {
                for connection in slow { try? connection.write(Data("s".utf8)) }
            }
        }
        defer {
            stop.signal()
            sender.join()
        }

        let normal = try TestConnection(port: server.port, timeoutSeconds: 10)
        let read = HTTPTestClient.head(
            "GET", "/v1/items/genericPassword?service=slow&return=data", headers: ["Authorization": "Bearer \(token)"],
            bodyLength: nil)
        let started = Hardening.now()
        for index in 0..<requests {
            try normal.write(read)
            let answer = try normal.readResponse()
            try #require(answer.status == 200, "read \(index) answered \(answer.status)")
        }
        let elapsed = Hardening.now() - started
        // The slow clients held their connections all along: the server still has every one.
        #expect(slowPorts.isSubset(of: Hardening.connectedPeerPorts(server.pid)))
        Hardening.report(String(
            format: "slow clients: %d slow connections held while %d reads were answered in %.2f s; RSS %d -> %d KiB",
            slowCount, requests, elapsed, rssIdle, Hardening.rssKiB(server.pid)))
    }

    @Test func manyIdleKeepAliveConnectionsStayCheap() throws {
        let count = Hardening.count(ci: 500, full: 10_000)
        let fileLimit = Hardening.raiseFileLimit()
        try #require(fileLimit > count + 100, "open-file limit \(fileLimit) is below \(count) connections")
        let server = try KeychaindProcess(environment: [
            "KEYCHAIND_LIMITS_MAX_CONNECTIONS": "\(count + 16)", "KEYCHAIND_LIMITS_IDLE_TIMEOUT_SECONDS": "300",
            "KEYCHAIND_LIMITS_MAX_CONNECTIONS_PER_ADDRESS": "0",  // all from 127.0.0.1
        ])
        defer { server.stop() }
        let rssBefore = Hardening.rssKiB(server.pid)
        let started = Hardening.now()
        var connections: [TestConnection] = []
        connections.reserveCapacity(count)
        let head = HTTPTestClient.head("GET", "/health", headers: [:], bodyLength: nil)
        for _ in 0..<count {
            let connection = try TestConnection(port: server.port)
            try connection.write(head)
            #expect(try connection.readResponse().status == 200)
            connections.append(connection)  // kept open, idle, keep-alive
        }
        let opened = Hardening.now() - started
        let rssHeld = Hardening.rssKiB(server.pid)
        // A normal client still gets answers at once; and the held connections still work.
        let probeStart = Hardening.now()
        #expect(try server.client().send("GET", "/health").status == 200)
        let probe = (Hardening.now() - probeStart) * 1000
        try connections[count / 2].write(head)
        #expect(try connections[count / 2].readResponse().status == 200)
        Hardening.report(String(
            format: "idle keep-alive: %d connections opened in %.1f s; server RSS %d -> %d KiB (%.1f KiB per connection); a new request meanwhile %.2f ms",
            count, opened, rssBefore, rssHeld, Double(rssHeld - rssBefore) / Double(count), probe))
        let ports = Set(connections.map(\.localPort))
        connections.removeAll()
        #expect(waitUntil { Hardening.connectedPeerPorts(server.pid).isDisjoint(with: ports) }, "the server lets them go")
        Hardening.report("idle keep-alive: RSS after closing them \(Hardening.rssKiB(server.pid)) KiB")
        #expect(rssHeld - rssBefore < count * 96, "about the 64 KiB connection pool each, bounded")
    }

    @Test func beyondTheConnectionLimitNewConnectionsWaitUntilOneFrees() throws {
        let limit = 20
        let server = try KeychaindProcess(environment: ["KEYCHAIND_LIMITS_MAX_CONNECTIONS": "\(limit)"])
        defer { server.stop() }
        let head = HTTPTestClient.head("GET", "/health", headers: [:], bodyLength: nil)
        var held: [TestConnection] = []
        for _ in 0..<limit {
            let connection = try TestConnection(port: server.port)
            try connection.write(head)
            #expect(try connection.readResponse().status == 200)
            held.append(connection)
        }
        // Over the limit libmicrohttpd stops accepting: the connection waits in the kernel's
        // listen backlog, unanswered, until a slot frees; then it is served.
        let extra = try TestConnection(port: server.port, timeoutSeconds: 2)
        try extra.write(head)
        let started = Hardening.now()
        var outcome: String
        do {
            outcome = "answered \(try extra.readResponse().status) while full"
        } catch {
            outcome = String(format: "no answer within %.1f s while full", Hardening.now() - started)
        }
        #expect(outcome.hasPrefix("no answer"), "over the limit: \(outcome)")
        held.removeFirst()
        let freed = Hardening.now()
        do {
            let late = try extra.readResponse()
            outcome += String(format: "; answered %d %.2f s after a slot freed", late.status, Hardening.now() - freed)
            #expect(late.status == 200)
        } catch {
            outcome += "; still no answer after a slot freed"
            Issue.record("the waiting connection was not served after a slot freed")
        }
        Hardening.report("connection \(limit + 1) with limits.maxConnections = \(limit): \(outcome)")
        withExtendedLifetime(extra) {}
        withExtendedLifetime(held) {}
    }

    @Test func failedAuthenticationsAreLimitedPerAddressOverHTTP() throws {
        let server = try KeychaindProcess(environment: ["KEYCHAIND_LIMITS_AUTH_FAILURES_PER_MINUTE": "10"])
        defer { server.stop() }
        let http = server.client()
        let token = try server.newClientToken("valid", groups: ["valid"])
        var statuses: [Int] = []
        var retryAfter: String?
        let started = Hardening.now()
        for index in 0..<Hardening.count(ci: 30, full: 1000) {
            let answer = try http.send("GET", "/v1/items/genericPassword?service=x", token: "kc_guess\(index)")
            statuses.append(answer.status)
            if answer.status == 429 {
                retryAfter = answer.headers["retry-after"]
                #expect(answer.json["status"] as? Int == -25293)
            }
        }
        let elapsed = Hardening.now() - started
        #expect(statuses.prefix(10).allSatisfy { $0 == 401 })
        #expect(statuses.dropFirst(10).allSatisfy { $0 == 429 }, "\(statuses)")
        #expect(retryAfter.flatMap(Int.init).map { (1...6).contains($0) } == true, "Retry-After \(retryAfter ?? "none")")
        // The valid client on the same address is not limited.
        let valid = try http.send("GET", "/v1/items/genericPassword?service=x", token: token)
        #expect(valid.status == 404, "a valid token works while its address is limited: \(valid.status)")
        Hardening.report(String(format: "auth failures: %d bad tokens in %.2f s: %d x 401, %d x 429 (Retry-After %@ s); valid token meanwhile %d",
                                statuses.count, elapsed, statuses.filter { $0 == 401 }.count, statuses.filter { $0 == 429 }.count,
                                retryAfter ?? "-", valid.status))
    }
}
