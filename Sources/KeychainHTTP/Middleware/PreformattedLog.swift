public import Logging

/// A log backend that takes a message as bytes written straight into its line: the request log
/// writes one line per request, and swift-log's message and metadata would cost more than the
/// rest of the line. keychaind's stderr log (KeychainObservability) is one.
public protocol PreformattedLog: Sendable {
    /// The least severe level logged: a caller skips building a line the backend would drop.
    var logLevel: Logger.Level { get }

    /// Logs at `level` (when the backend's level lets it through) what `Logger` would log from a
    /// file of module `source` with no metadata, the message written by `message`.
    func log(_ level: Logger.Level, source: String, message: (inout [UInt8]) -> Void)
}
