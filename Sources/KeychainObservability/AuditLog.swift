public import KeychainHTTP
public import Logging
import Synchronization

/// The auditor's lines into the audit file. By default (fail-open, no fsync) lines go through a
/// `LineBatcher`: the request thread only queues its line, and a background thread appends the
/// queued lines to the file about every 10 ms with one `write(2)`. A line therefore reaches the
/// kernel shortly *after* its answer; a crash of keychaind can lose the last 10 ms or so of
/// lines. `failClosed` or `file.fsync` write every line on the request thread, before the answer.
///
/// Lines that cannot be written are counted (`keychaind_audit_write_failures_total`) and logged
/// once per run of failures, not once per request.
public final class AuditLog: AuditSink {
    public let file: AuditFile
    public let failClosed: Bool
    /// Nil when lines are written on the request thread (`failClosed` or `file.fsync`).
    private let batcher: LineBatcher?
    private let writer: Writer

    public init(file: AuditFile, failClosed: Bool, logger: Logger) {
        self.file = file
        self.failClosed = failClosed
        let writer = Writer(file: file, failClosed: failClosed, logger: logger)
        self.writer = writer
        batcher =
            failClosed || file.fsync
            ? nil
            : LineBatcher(name: "keychaind audit log") { bytes, lines in _ = writer.append(bytes, lines: lines) }
    }

    public func write(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        if let batcher {
            batcher.append(line)
            return true
        }
        return writer.append(Array(line), lines: 1)
    }

    /// Flushes and stops the background writer (at shutdown); later lines are written directly.
    public func close() { batcher?.close() }

    /// How many lines could not be written since start.
    public var writeFailures: UInt64 { writer.failures.load(ordering: .relaxed) }

    /// Appends to the file, counting failed lines and logging once per run of failures.
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
}
