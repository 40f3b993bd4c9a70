import Foundation
import KeychainAPI
import KeychainCore
import Logging
import KeychainObservability
import Testing

@testable import KeychainHTTP

/// The pieces of the audit log and the metrics, in process.
struct ObserveTests {
    static let noLog = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    /// Lines to /dev/null (fail-open: it is no regular file, so every write fails unseen).
    static let discard = AuditLog(file: AuditFile(path: "/dev/null"), failClosed: false, logger: noLog)

    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("audit-\(UUID().uuidString).log").path
    }

    @Test func tagsAreCanonicalKeyedAndShort() {
        let auditor = Auditor(sink: Self.discard, mac: SHA256Stub.mac)
        let request = { (method: HTTPMethod, query: [HTTPRequest.QueryItem], body: String, parameters: PathParameters) in
            RequestContext(
                request: HTTPRequest(method: method, path: "/items/internetPassword", queryItems: query, body: Array(body.utf8)),
                parameters: parameters)
        }
        let subject = { (context: RequestContext) in auditor.subject(of: context, target: .item) }
        let fromQuery = subject(
            request(.get, [.init(name: "port", value: "443"), .init(name: "value", value: "secret"),
                               .init(name: "limit", value: "all"), .init(name: "bogus", value: "x")], "",
                        ["class": "internetPassword"]))
        let fromBody = subject(
            request(.post, [], #"{"port":443,"data":"c2VjcmV0","privateKey":"AAAA"}"#, ["class": "internetPassword"]))
        #expect(fromQuery.attributes.map(\.0) == ["port"], "only attributes of the class")
        #expect(fromBody.attributes.map(\.0) == ["port"])
        #expect(fromQuery.attributes.first?.1 == fromBody.attributes.first?.1, "443 as text and as a number")
        #expect(fromQuery.attributes.first?.1.count == 22)
        #expect(auditor.tag("account", Auditor.raw("bob")) != auditor.tag("service", Auditor.raw("bob")))

        let byRef = subject(
            request(.get, [], "", ["class": "internetPassword", "persistentRef": "not-a-ref"]))
        #expect(byRef.persistentRef == nil, "only well-formed references are written")
        let unknownClass = subject(request(.get, [.init(name: "port", value: "1")], "", ["class": "nope"]))
        #expect(unknownClass.itemClass == nil && unknownClass.attributes.isEmpty)
    }

    @Test func aTagIsTheFirstSixteenBytesOfTheMACInBase64url() {
        let auditor = Auditor(sink: Self.discard, mac: SHA256Stub.mac)
        for value in ["bob", "", String(repeating: "long value ", count: 200)] {
            let message = Array("account".utf8) + [0] + Auditor.raw(value)
            let expected = Data(SHA256Stub.digest(message).prefix(16)).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(auditor.tag("account", Auditor.raw(value)) == expected)
            #expect(auditor.tag("account", Auditor.raw(value)) == expected, "the same tag each time")
        }
        let values = (0..<10_000).map { auditor.tag("account", Auditor.raw("value-\($0)")) }
        #expect(Set(values).count == values.count)
    }

    @Test func valuesAreTaggedLockedWhileTheKeyIsAway() {
        let auditor = Auditor(sink: Self.discard, mac: { _, _ in false })
        #expect(auditor.tag("service", Auditor.raw("api")) == "locked")
    }

    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"), (-1, "1969-12-31T23:59:59.999Z"),
        (951_782_400_000, "2000-02-29T00:00:00.000Z"), (1_795_298_140_684, "2026-11-21T21:55:40.684Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"), (1_795_298_140_999, "2026-11-21T21:55:40.999Z"),
        (1_795_298_141_000, "2026-11-21T21:55:41.000Z"), (-1000, "1969-12-31T23:59:59.000Z"),
        (-1001, "1969-12-31T23:59:58.999Z"),
    ])
    func timestampsAreRFC3339WithMilliseconds(milliseconds: Int64, text: String) {
        #expect(RFC3339.format(millisecondsSince1970: milliseconds) == text)
        #expect(RFC3339.parse(text)?.millisecondsSince1970 == milliseconds)
        var bytes = Array("x".utf8)
        LineTimestamp.append(millisecondsSince1970: milliseconds, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "x" + text)
    }

    @Test func decimals() {
        for value in [0, 7, 10, 99, 100, 12_345, UInt64(Int64.max), .max] as [UInt64] {
            var bytes: [UInt8] = []
            bytes.appendDecimal(value)
            #expect(String(decoding: bytes, as: UTF8.self) == String(value))
        }
        for value in [0, -1, -25300, .min, .max] as [Int64] {
            var bytes: [UInt8] = []
            bytes.appendDecimal(value)
            #expect(String(decoding: bytes, as: UTF8.self) == String(value))
        }
    }

    /// `ms` is written from integer microseconds exactly as the `Double` number of milliseconds prints.
    @Test func millisecondsAreWrittenAsTheirDoubleIs() {
        var samples = Array(UInt64(0)..<3_000)
        samples += [10_000, 10_010, 10_100, 99_999, 1_000_000, 1_234_567, 86_400_000_000, 3_600_000_000_001]
        for microseconds in samples {
            var measure = LineWriter()
            measure.milliseconds("ms", microseconds: microseconds)
            let written = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: measure.lineCapacity) { memory in
                var line = LineWriter(writingTo: memory)
                line.milliseconds("ms", microseconds: microseconds)
                return String(decoding: line.finish(), as: UTF8.self)
            }
            #expect(written == "{\"ms\":\(Double(microseconds) / 1000)}\n")
        }
    }

    @Test func linesAreJSON() throws {
        let auditor = Auditor(
            sink: Self.discard, mac: SHA256Stub.mac,
            clock: { 1_795_298_140_684 })
        var entry = auditor.begin(HTTPRequest(method: .get, path: "/x", remoteAddress: "::1"), route: "/admin/clients/{name}")
        entry.client = "we\"ird\\name\n"
        entry.status = 200
        entry.osStatus = -25300
        entry.microseconds = 1250
        entry.subject.parameters = [("name", "a\u{01}b")]
        let line = auditor.withLine(entry, phase: "attempt") { Array($0) }
        #expect(line.last == 0x0A)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.dropLast())) as? [String: Any])
        #expect(object["client"] as? String == "we\"ird\\name\n")
        #expect(object["osStatus"] as? Int == -25300)
        #expect(object["ms"] as? Double == 1.25)
        #expect(String(decoding: line, as: UTF8.self).hasSuffix(#""ms":1.25}"# + "\n"))
        #expect(object["time"] as? String == RFC3339.format(millisecondsSince1970: 1_795_298_140_684))
        #expect(object["phase"] as? String == "attempt")
        #expect((object["params"] as? [String: String])?["name"] == "a\u{01}b")
    }

    /// Every field at its largest (values all control bytes, so each byte is written as
    /// `\u00XX`; the longest numbers) fits the size the line was measured at, and is JSON.
    @Test func linesAtTheirMeasuredBound() throws {
        let auditor = Auditor(
            sink: Self.discard, mac: SHA256Stub.mac,
            clock: { 253_402_300_799_999 })
        let controls = String(repeating: "\u{01}", count: 300)
        var entry = auditor.begin(HTTPRequest(method: .get, path: "/x", remoteAddress: controls), route: controls)
        entry.client = controls
        entry.status = Int.max
        entry.osStatus = Int32.min
        entry.microseconds = .max
        entry.subject.itemClass = controls
        entry.subject.persistentRef = controls
        entry.subject.attributes = [(controls, controls), ("", "")]
        entry.subject.changes = [(controls, "")]
        entry.subject.parameters = [("", controls)]
        let line = auditor.withLine(entry, phase: controls) { Array($0) }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.dropLast())) as? [String: Any])
        #expect(object["client"] as? String == controls)
        #expect((object["attributes"] as? [String: String])?[controls] == controls)
        #expect(object["status"] as? Int == Int.max)
        #expect(object["osStatus"] as? Int == Int(Int32.min))
        #expect(String(decoding: line, as: UTF8.self).hasSuffix(#""ms":18446744073709551.615}"# + "\n"))
    }

    @Test func metricsText() {
        let metrics = RequestMetrics()
        metrics.record(route: "/health", method: .get, status: 200, seconds: 0.0002)
        metrics.record(route: "/health", method: .get, status: 200, seconds: 9)
        metrics.record(route: "/x", method: HTTPMethod("BREW"), status: 405, seconds: 0.001)
        var text = PrometheusText()
        metrics.render(into: &text)
        #expect(text.text.contains("keychaind_http_requests_total{route=\"/health\",method=\"GET\",status=\"200\"} 2\n"))
        #expect(text.text.contains("method=\"OTHER\""))
        #expect(text.text.contains("keychaind_http_request_duration_seconds_bucket{route=\"/health\",le=\"0.00025\"} 1\n"))
        #expect(text.text.contains("keychaind_http_request_duration_seconds_bucket{route=\"/health\",le=\"2.5\"} 1\n"))
        #expect(text.text.contains("keychaind_http_request_duration_seconds_bucket{route=\"/health\",le=\"+Inf\"} 2\n"))
        #expect(PrometheusText.escape("a\"b\\c\nd") == "a\\\"b\\\\c\\nd")
        #expect(PrometheusText.format(.nan) == "NaN")
    }

    @Test func metricsFromManyThreadsAddUp() {
        let metrics = RequestMetrics()
        let done = DispatchGroup()
        for thread in 0..<4 {
            done.enter()
            Thread {
                for _ in 0..<1000 { metrics.record(route: "/health", method: .get, status: 200, seconds: 0.0002) }
                metrics.record(route: "/health", method: .get, status: 500 + thread, seconds: 3)
                done.leave()
            }.start()
        }
        done.wait()
        var text = PrometheusText()
        metrics.render(into: &text)
        #expect(text.text.contains("keychaind_http_requests_total{route=\"/health\",method=\"GET\",status=\"200\"} 4000\n"))
        for status in 500..<504 {
            #expect(text.text.contains("keychaind_http_requests_total{route=\"/health\",method=\"GET\",status=\"\(status)\"} 1\n"))
        }
        #expect(text.text.contains("keychaind_http_request_duration_seconds_bucket{route=\"/health\",le=\"0.00025\"} 4000\n"))
        #expect(text.text.contains("keychaind_http_request_duration_seconds_bucket{route=\"/health\",le=\"2.5\"} 4000\n"))
        #expect(text.text.contains("keychaind_http_request_duration_seconds_count{route=\"/health\"} 4004\n"))
    }

    @Test func metricsAreSortedByRouteMethodAndStatus() {
        let metrics = RequestMetrics()
        for (route, method, status) in [("/items", HTTPMethod.post, 201), ("/health", .get, 200), ("/items", .get, 404),
                                         ("/items", .get, 200), ("/health", .get, 200), ("/items", .delete, 204)] {
            metrics.record(route: route, method: method, status: status, seconds: 0.001)
        }
        var text = PrometheusText()
        metrics.render(into: &text)
        let requests = text.text.split(separator: "\n").filter { $0.hasPrefix("keychaind_http_requests_total{") }
        #expect(requests == [
            #"keychaind_http_requests_total{route="/health",method="GET",status="200"} 2"#,
            #"keychaind_http_requests_total{route="/items",method="DELETE",status="204"} 1"#,
            #"keychaind_http_requests_total{route="/items",method="GET",status="200"} 1"#,
            #"keychaind_http_requests_total{route="/items",method="GET",status="404"} 1"#,
            #"keychaind_http_requests_total{route="/items",method="POST",status="201"} 1"#,
        ])
        let counts = text.text.split(separator: "\n").filter { $0.hasPrefix("keychaind_http_request_duration_seconds_count") }
        #expect(counts == [
            #"keychaind_http_request_duration_seconds_count{route="/health"} 2"#,
            #"keychaind_http_request_duration_seconds_count{route="/items"} 4"#,
        ])
    }
}

/// A stand-in MAC for tests (KeychainHTTP has no crypto of its own): FNV-style mixing, 32 bytes.
enum SHA256Stub {
    /// In the shape of `Auditor.MAC`: the stub digest of `message` into `mac`.
    static let mac: Auditor.MAC = { message, mac in
        mac.copyBytes(from: digest(Array(message)))
        return true
    }

    static func digest(_ bytes: [UInt8]) -> [UInt8] {
        var state: UInt64 = 0xcbf2_9ce4_8422_2325
        var out: [UInt8] = []
        for round in 0..<4 {
            for byte in bytes + [UInt8(round)] { state = (state ^ UInt64(byte)) &* 0x100_0000_01b3 }
            withUnsafeBytes(of: state) { out += $0 }
        }
        return out
    }
}
