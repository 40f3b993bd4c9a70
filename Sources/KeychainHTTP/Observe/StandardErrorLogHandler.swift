#if canImport(Glibc)
import Glibc
#endif
import KeychainCore
import Logging

/// keychaind's log on standard error, in swift-log's `StreamLogHandler` format
/// (`<time> <level> <label>: <metadata> [<source>] <message>`) with UTC timestamps in
/// milliseconds (`2026-11-21T23:05:27.123Z`).
///
/// The request log writes a line per request, so lines go through a `LineBatcher` (one
/// `write(2)` for many lines, about every millisecond, off the request path) instead of
/// `StreamLogHandler`'s locked `fwrite` per line, whose `localtime` also `stat`s
/// `/etc/localtime` on every call. Warnings and worse are flushed before `log` returns, so they
/// are out before anything that follows them (an exit, a crash). `flush()` at exit writes the rest.
public struct StandardErrorLogHandler: LogHandler {
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
        let pretty = hasExtra ? Self.prettify(merged) : prettyMetadata

        var line: [UInt8] = []
        line.reserveCapacity(160)
        line.append(contentsOf: Self.timestamp().utf8)
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: event.level.rawValue.utf8)
        if !label.isEmpty {
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: label.utf8)
        }
        line.append(UInt8(ascii: ":"))
        if let pretty {
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: pretty.utf8)
        }
        line.append(contentsOf: " [".utf8)
        line.append(contentsOf: event.source.utf8)
        line.append(contentsOf: "] ".utf8)
        line.append(contentsOf: event.message.description.utf8)
        line.append(0x0A)
        Self.output.append(line)
        if event.level >= .warning { Self.output.flush() }
    }

    private static func prettify(_ metadata: Logger.Metadata) -> String? {
        metadata.isEmpty ? nil : metadata.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
    }

    /// Now, as RFC 3339 UTC with milliseconds.
    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return RFC3339.format(millisecondsSince1970: Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000)
    }
}
