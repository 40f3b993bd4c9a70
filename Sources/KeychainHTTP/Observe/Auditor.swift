import KeychainAPI
import KeychainCore
import Logging
import Synchronization

/// Writes the audit log: one JSON line per request (and, when `failClosed`, one more before the
/// handler runs). Entries name who did what to which item, never what was stored: attribute
/// values and path parameters appear only as a keyed HMAC (`mac`, HMAC-SHA-256 under the vault's
/// audit key, cut to 16 bytes, base64url), so equal values correlate across entries and across
/// restarts, but cannot be read. Secrets, tokens, bodies and the raw path are never written.
///
/// `failClosed`: the request is audited (`"phase":"attempt"`) *before* its handler runs; when
/// that line cannot be written the request is refused with errSecNotAvailable (503) and nothing
/// is changed, and the outcome line is written before the response is handed back.
///
/// By default (fail-open, no fsync) lines go through a `LineBatcher`: the request thread only
/// queues its line, and a background thread appends the queued lines to the file about every
/// 10 ms with one `write(2)`. A line therefore reaches the kernel shortly *after* its answer; a
/// crash of keychaind can lose the last 10 ms or so of lines. `failClosed` or
/// `audit.fsync` write every line on the request thread, before the answer.
public final class Auditor: Sendable {
    public let file: AuditFile
    public let failClosed: Bool
    /// Nil when lines are written on the request thread (`failClosed` or `file.fsync`).
    private let batcher: LineBatcher?
    private let mac: MAC
    /// Now, in milliseconds since 1970.
    private let clock: @Sendable () -> Int64
    private let sequence = Atomic<UInt64>(0)
    private let writer: Writer

    /// Writes HMAC-SHA-256 of `message` under the audit key into `mac` (32 bytes; cut to 16
    /// here) and returns true; false while the vault is locked, when values are written as
    /// `"locked"` instead of a tag.
    public typealias MAC = @Sendable (_ message: UnsafeRawBufferPointer, _ mac: UnsafeMutableRawBufferPointer) -> Bool

    public init(
        file: AuditFile, failClosed: Bool, mac: @escaping MAC, logger: Logger,
        clock: @escaping @Sendable () -> Int64 = LineTimestamp.now
    ) {
        self.file = file
        self.failClosed = failClosed
        self.mac = mac
        self.clock = clock
        let writer = Writer(file: file, failClosed: failClosed, logger: logger)
        self.writer = writer
        batcher =
            failClosed || file.fsync
            ? nil
            : LineBatcher(name: "keychaind audit log") { bytes, lines in _ = writer.append(bytes, lines: lines) }
    }

    /// Flushes and stops the background writer (at shutdown); later lines are written directly.
    public func close() { batcher?.close() }

    /// How many lines could not be written since start (`keychaind_audit_write_failures_total`).
    public var writeFailures: UInt64 { writer.failures.load(ordering: .relaxed) }

    /// What an entry says about the request's target, worked out once per request.
    struct Subject {
        var itemClass: String?
        var persistentRef: String?
        var attributes: [(String, String)] = []
        var changes: [(String, String)] = []
        var parameters: [(String, String)] = []
    }

    /// One request's entry, filled in as the request goes.
    struct Entry {
        let id: UInt64
        var method: String
        var route: String
        var remote: String?
        var client: String?
        var subject = Subject()
        var status: Int?
        var osStatus: Int32?
        /// Time from routing to the response (written as `ms`, in milliseconds).
        var microseconds: UInt64?
    }

    func begin(_ request: HTTPRequest, route: String) -> Entry {
        Entry(
            id: sequence.add(1, ordering: .relaxed).newValue, method: Self.methodLabel(request.method), route: route,
            remote: request.remoteAddress)
    }

    /// The class, reference and HMACed attributes of a matched request, read from the request
    /// the handler reads (its body parsed once for both). Only names that are attributes of the
    /// class are kept (never `value`, `data`, `privateKey`, control keys or unknown names); path
    /// parameters other than the class, the reference and a client name are HMACed.
    func subject(of context: RequestContext) -> Subject {
        var subject = Subject()
        var className: String?
        func add(_ name: String, _ value: String) {
            switch name {
            case "class": className = value
            case "persistentRef":
                subject.persistentRef = PersistentRef(value) != nil ? value : nil
            case "name" where Client.isValidName(value):
                subject.parameters.append((name, value))
            default:
                subject.parameters.append((name, tag(name, Self.raw(value))))
            }
        }
        // In name order; most routes have one parameter, which needs no sorting.
        if context.parameters.count > 1 {
            for (name, value) in context.parameters.sorted(by: { $0.name < $1.name }) { add(name, value) }
        } else {
            for (name, value) in context.parameters { add(name, value) }
        }
        guard let className, let itemClass = ItemClass(rawValue: className) else {
            return subject
        }
        subject.itemClass = itemClass.rawValue
        if context.request.method == .post {
            subject.attributes = tags(Self.bodyArguments(of: itemClass, in: context))
        } else {
            subject.attributes = tags(AttributeArgument.arguments(of: itemClass, in: context.request.queryItems))
            if context.request.method == .patch { subject.changes = tags(Self.bodyArguments(of: itemClass, in: context)) }
        }
        return subject
    }

    /// The attempt line (failClosed only); throws errSecNotAvailable when it cannot be written.
    func recordAttempt(_ entry: Entry) throws {
        guard record(entry, phase: "attempt") else {
            throw KeychainError(.notAvailable, "the audit log cannot be written; the request was refused")
        }
    }

    /// The outcome line; a failure is counted and logged, never thrown.
    func recordOutcome(_ entry: Entry) {
        _ = record(entry, phase: nil)
    }

    // MARK: - Lines

    /// Runs `body` over the entry as one JSON line, written field by field (this runs on every
    /// request): measured first, then written into memory of that size (on the stack, for the
    /// usual few hundred bytes).
    func withLine<Result>(_ entry: Entry, phase: String?, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let time = clock()
        var measure = LineWriter()
        fields(of: entry, phase: phase, time: time, to: &measure)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: measure.lineCapacity) { memory in
            var line = LineWriter(writingTo: memory)
            fields(of: entry, phase: phase, time: time, to: &line)
            return body(line.finish())
        }
    }

    private func fields(of entry: Entry, phase: String?, time: Int64, to line: inout LineWriter) {
        line.time("time", millisecondsSince1970: time)
        line.integer("id", Int64(truncatingIfNeeded: entry.id))
        if let phase { line.string("phase", phase) }
        if let client = entry.client { line.string("client", client) } else { line.null("client") }
        if let remote = entry.remote { line.string("remote", remote) }
        line.string("method", entry.method)
        line.string("route", entry.route)
        if let status = entry.status { line.integer("status", Int64(status)) }
        if let osStatus = entry.osStatus { line.integer("osStatus", Int64(osStatus)) }
        if let itemClass = entry.subject.itemClass { line.string("class", itemClass) }
        if let ref = entry.subject.persistentRef { line.string("persistentRef", ref) }
        if !entry.subject.attributes.isEmpty { line.object("attributes", entry.subject.attributes) }
        if !entry.subject.changes.isEmpty { line.object("changes", entry.subject.changes) }
        if !entry.subject.parameters.isEmpty { line.object("params", entry.subject.parameters) }
        if let microseconds = entry.microseconds { line.milliseconds("ms", microseconds: microseconds) }
    }

    /// Writes (or, batched, queues) the entry's line; false when it could not be written.
    private func record(_ entry: Entry, phase: String?) -> Bool {
        withLine(entry, phase: phase) { line in
            if let batcher {
                batcher.append(line)
                return true
            }
            return writer.append(Array(line), lines: 1)
        }
    }

    /// Appends to the file, counting failed lines and logging once per run of failures (not
    /// once per request).
    private final class Writer: Sendable {
        let file: AuditFile
        let failClosed: Bool
        let logger: Logger
        let failures = Atomic<UInt64>(0)
        private let failing = Atomic<Bool>(false)

        init(file: AuditFile, failClosed: Bool, logger: Logger) {
            self.file = file
            self.failClosed = failClosed
            self.logger = logger
        }

        func append(_ bytes: [UInt8], lines: Int) -> Bool {
            do {
                try file.append(bytes)
                if failing.load(ordering: .relaxed) {
                    failing.store(false, ordering: .relaxed)
                    logger.notice("audit log writable again", metadata: ["path": "\(file.path)"])
                }
                return true
            } catch {
                failures.add(UInt64(lines), ordering: .relaxed)
                if !failing.exchange(true, ordering: .relaxed) {
                    logger.error(
                        "audit log cannot be written", metadata: ["error": "\(error)", "failClosed": "\(failClosed)"])
                }
                return false
            }
        }
    }

    // MARK: - HMAC tags

    /// The body's attribute arguments; none when the body is not a JSON object.
    private static func bodyArguments(
        of itemClass: ItemClass, in context: RequestContext
    ) -> [(name: String, argument: AttributeArgument)] {
        guard let body = try? context.jsonBody() else { return [] }
        return AttributeArgument.arguments(of: itemClass, in: body)
    }

    /// Each attribute argument with the tag of its value: of the typed value, or of the value as
    /// sent when the attribute does not take it.
    private func tags(_ arguments: [(name: String, argument: AttributeArgument)]) -> [(String, String)] {
        arguments.map { name, argument in
            switch argument {
            case .typed(let value): (name, tag(name, Self.canonical(value)))
            case .sent(let text): (name, tag(name, Self.raw(text)))
            }
        }
    }

    /// base64url(HMAC-SHA-256(auditKey, name ‖ 0x00 ‖ canonical value)[0..<16]), worked out for
    /// every value: the message and the MAC are written into one temporary allocation (on the
    /// stack for the usual short values), and an HMAC on the prepared key costs about what
    /// looking a remembered tag up did (docs/benchmarks.md, "Audit tags: session 17").
    func tag(_ name: String, _ canonical: [UInt8]) -> String {
        let nameLength = name.utf8.count
        let messageLength = nameLength + 1 + canonical.count
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: messageLength + Self.macSize) { memory in
            let start = memory.baseAddress!
            _ = UnsafeMutableBufferPointer(start: start, count: nameLength).initialize(from: name.utf8)
            start[nameLength] = 0
            canonical.withUnsafeBufferPointer { value in
                if let bytes = value.baseAddress { (start + nameLength + 1).initialize(from: bytes, count: value.count) }
            }
            let message = UnsafeRawBufferPointer(start: start, count: messageLength)
            let digest = UnsafeMutableRawBufferPointer(start: start + messageLength, count: Self.macSize)
            guard mac(message, digest) else { return "locked" }
            return Self.base64url(UnsafeRawBufferPointer(rebasing: digest[0..<Self.tagBytes]))
        }
    }

    private static let macSize = 32
    /// The MAC's bytes a tag keeps.
    private static let tagBytes = 16

    /// A type byte and the value, as the server stores it (so `port=443` in a query and `443`
    /// in a body, or `ecdsa` and `ecsecPrimeRandom`, give the same tag).
    static func canonical(_ value: AttributeValue) -> [UInt8] {
        switch value {
        case .string(let text): typed("s", text.utf8)
        case .data(let bytes): typed("d", bytes)
        case .integer(let number): typed("i", String(number).utf8)
        case .bool(let flag): typed("b", (flag ? "true" : "false").utf8)
        case .date(let date): typed("t", String(date.millisecondsSince1970).utf8)
        }
    }

    /// A value the attribute refused, as sent.
    static func raw(_ text: String) -> [UInt8] { typed("r", text.utf8) }

    /// The type byte and the value's bytes, in one allocation.
    private static func typed(_ type: Unicode.Scalar, _ value: some Collection<UInt8>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(1 + value.count)
        bytes.append(UInt8(ascii: type))
        bytes.append(contentsOf: value)
        return bytes
    }

    /// Known methods as they are, anything else as `OTHER` (bounded labels, nothing echoed).
    static func methodLabel(_ method: HTTPMethod) -> String {
        switch method {
        case .get, .head, .post, .put, .patch, .delete: method.rawValue
        default: "OTHER"
        }
    }

    private static let base64urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Without padding, written straight into the string's storage.
    static func base64url(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: (bytes.count * 4 + 2) / 3) { output in
            base64urlAlphabet.withUnsafeBufferPointer { alphabet in
                var count = 0
                var buffer: UInt32 = 0
                var bits = 0
                for byte in bytes {
                    buffer = (buffer << 8) | UInt32(byte)
                    bits += 8
                    while bits >= 6 {
                        bits -= 6
                        output[count] = alphabet[Int((buffer >> UInt32(bits)) & 63)]
                        count += 1
                    }
                }
                if bits > 0 {
                    output[count] = alphabet[Int((buffer << UInt32(6 - bits)) & 63)]
                    count += 1
                }
                return count
            }
        }
    }
}
