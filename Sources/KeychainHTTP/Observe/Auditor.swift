import KeychainAPI
import KeychainCore
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
/// What an entry says is decided here; where its line goes (a file, batched or written on the
/// request thread, fsynced or not) is the `sink`'s business.
public final class Auditor: Sendable {
    let sink: any AuditSink
    /// Now, in milliseconds since 1970.
    let clock: @Sendable () -> Int64
    let sequence = Atomic<UInt64>(0)
    let mac: MAC

    public var failClosed: Bool { sink.failClosed }

    /// Writes HMAC-SHA-256 of `message` under the audit key into `mac` (32 bytes; cut to 16
    /// here) and returns true; false while the vault is locked, when values are written as
    /// `"locked"` instead of a tag.
    public typealias MAC = @Sendable (_ message: UnsafeRawBufferPointer, _ mac: UnsafeMutableRawBufferPointer) -> Bool

    public init(sink: any AuditSink, mac: @escaping MAC, clock: @escaping @Sendable () -> Int64 = LineTimestamp.now) {
        self.sink = sink
        self.mac = mac
        self.clock = clock
    }

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
        /// The caller's token (or, for a login, the token issued): accessor, login role, JWT `sub`.
        var token: TokenRecord?
        var subject = Subject()
        var status: Int?
        var osStatus: Int32?
        /// Why authentication refused the caller (`reason`).
        var refusal: AuthenticationRefusal?
        /// Time from routing to the response (written as `ms`, in milliseconds).
        var microseconds: UInt64?
    }

    func begin(_ request: HTTPRequest, route: String) -> Entry {
        Entry(
            id: sequence.add(1, ordering: .relaxed).newValue, method: Self.methodLabel(request.method), route: route,
            remote: request.remoteAddress)
    }

    /// The attempt line (failClosed only); throws errSecNotAvailable when it cannot be written.
    func recordAttempt(_ entry: Entry) throws(KeychainError) {
        guard record(entry, phase: "attempt") else {
            throw KeychainError(.notAvailable, "the audit log cannot be written; the request was refused")
        }
    }

    /// The outcome line; a failure is the sink's to count and report, never thrown.
    func recordOutcome(_ entry: Entry) {
        _ = record(entry, phase: nil)
    }

    /// Writes (or queues) the entry's line; false when it could not be written.
    private func record(_ entry: Entry, phase: String?) -> Bool {
        withLine(entry, phase: phase) { sink.write($0) }
    }
}
