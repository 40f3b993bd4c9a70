#if canImport(Glibc)
import Glibc
#endif
import KeychainCore
public import KeychainHTTP
public import Logging

/// keychaind's log on standard error, in swift-log's `StreamLogHandler` format
/// (`<time> <level> <label>: <metadata> [<source>] <message>`) with UTC timestamps in
/// milliseconds (`2026-11-21T23:05:27.123Z`).
///
/// The request log writes a line per request, so lines go through a `LineBatcher` (one
/// `write(2)` for many lines, about every 10 ms, off the request path) instead of
/// `StreamLogHandler`'s locked `fwrite` per line, whose `localtime` also `stat`s
/// `/etc/localtime` on every call. Warnings and worse are flushed before `log` returns, so they
/// are out before anything that follows them (an exit, a crash). `flush()` at exit writes the rest.
///
/// Lines are built as bytes and queued to the batcher. The request log can skip swift-log's
/// message and event too (`log(_:source:message:)`), for the same line.
public struct StandardErrorLogHandler: LogHandler, PreformattedLog {
    /// The process's one writer to file descriptor 2.
    static let output = LineBatcher(name: "keychaind log") { bytes, _ in
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return  // stderr is gone: nothing left to tell
                }
                offset += written
            }
        }
    }

    /// Writes out every line logged so far.
    public static func flush() { output.flush() }

    private let label: String
    public var logLevel: Logger.Level
    public var metadataProvider: Logger.MetadataProvider?
    public var metadata = Logger.Metadata() {
        didSet { prettyMetadata = Self.prettify(metadata) }
    }
    private var prettyMetadata: String?

    public init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        var hasExtra = false
        if let provided = metadataProvider?.get(), !provided.isEmpty {
            merged.merge(provided) { _, new in new }
            hasExtra = true
        }
        if let explicit = event.metadata, !explicit.isEmpty {
            merged.merge(explicit) { _, new in new }
            hasExtra = true
        }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            hasExtra = true
        }
        let message = event.message.description
        writeLine(event.level, metadata: hasExtra ? Self.prettify(merged) : prettyMetadata, source: event.source) {
            $0.appendUTF8(message)
        }
    }

    /// What `Logger.log` at `level` with a message and no metadata, error or explicit source
    /// logs from a file of module `source`, with the message written by `message` into the line.
    /// For the request log, which runs on every request. Obeys `logLevel` as `Logger` does.
    public func log(_ level: Logger.Level, source: String, message: (inout [UInt8]) -> Void) {
        guard level >= logLevel else { return }
        var pretty = prettyMetadata
        if let provided = metadataProvider?.get(), !provided.isEmpty {
            pretty = Self.prettify(metadata.merging(provided) { _, new in new })
        }
        writeLine(level, metadata: pretty, source: source, message: message)
    }

    /// `<time> <level> <label>: <metadata> [<source>] <message>\n`, queued to `output` (and
    /// flushed for warnings and worse).
    private func writeLine(
        _ level: Logger.Level, metadata pretty: String?, source: String, message: (inout [UInt8]) -> Void
    ) {
        var line: [UInt8] = []
        line.reserveCapacity(160)
        LineTimestamp.append(millisecondsSince1970: LineTimestamp.now(), to: &line)
        line.append(UInt8(ascii: " "))
        line.appendUTF8(level.rawValue)
        if !label.isEmpty {
            line.append(UInt8(ascii: " "))
            line.appendUTF8(label)
        }
        line.append(UInt8(ascii: ":"))
        if let pretty {
            line.append(UInt8(ascii: " "))
            line.appendUTF8(pretty)
        }
        line.append(UInt8(ascii: " "))
        line.append(UInt8(ascii: "["))
        line.appendUTF8(source)
        line.append(UInt8(ascii: "]"))
        line.append(UInt8(ascii: " "))
        message(&line)
        line.append(0x0A)
        Self.output.append(line)
        if level >= .warning { Self.output.flush() }
    }

    private static func prettify(_ metadata: Logger.Metadata) -> String? {
        metadata.isEmpty ? nil : metadata.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
    }
}
