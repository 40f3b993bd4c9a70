import KeychainCore

/// An entry as its JSON line.
extension Auditor {
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
        if let token = entry.token {
            line.string("accessor", token.accessor)
            if case .login(let role) = token.source { line.string("loginRole", role) }
            if let subject = token.subject { line.string("subject", subject) }
        }
        if let remote = entry.remote { line.string("remote", remote) }
        line.string("method", entry.method)
        line.string("route", entry.route)
        if let status = entry.status { line.integer("status", Int64(status)) }
        if let osStatus = entry.osStatus { line.integer("osStatus", Int64(osStatus)) }
        if let refusal = entry.refusal { line.string("reason", refusal.rawValue) }
        if let itemClass = entry.subject.itemClass { line.string("class", itemClass) }
        if let ref = entry.subject.persistentRef { line.string("persistentRef", ref) }
        if !entry.subject.attributes.isEmpty { line.object("attributes", entry.subject.attributes) }
        if !entry.subject.changes.isEmpty { line.object("changes", entry.subject.changes) }
        if !entry.subject.parameters.isEmpty { line.object("params", entry.subject.parameters) }
        if let microseconds = entry.microseconds { line.milliseconds("ms", microseconds: microseconds) }
    }

    /// Known methods as they are, anything else as `OTHER` (bounded labels, nothing echoed).
    static func methodLabel(_ method: HTTPMethod) -> String {
        switch method {
        case .get, .head, .post, .put, .patch, .delete: method.rawValue
        default: "OTHER"
        }
    }
}
