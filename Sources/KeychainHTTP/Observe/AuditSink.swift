/// Where the auditor's lines go: in keychaind the audit file (KeychainObservability's `AuditLog`).
public protocol AuditSink: Sendable {
    /// Whether a request whose attempt line cannot be written is refused (errSecNotAvailable)
    /// before anything changes. A fail-closed sink writes every line before `write` returns.
    var failClosed: Bool { get }

    /// Writes or queues one line (JSON, newline included); false when it could not be written.
    func write(_ line: UnsafeBufferPointer<UInt8>) -> Bool
}
