/// How keychaind calls out to token endpoints (config `refresh.*`, docs/operations.md).
public struct OutboundHTTPSettings: Sendable, Equatable {
    /// Connecting, TLS included, gives up after this long.
    public var connectTimeoutMilliseconds: Int
    /// The whole exchange gives up after this long.
    public var timeoutMilliseconds: Int
    /// A longer answer is refused: a token answer is a few kilobytes.
    public var maximumAnswerBytes: Int
    /// PEM file of the CAs `https` token endpoints are verified against; nil: the system's.
    public var caFile: String?

    public init(
        connectTimeoutMilliseconds: Int = 5_000, timeoutMilliseconds: Int = 10_000, maximumAnswerBytes: Int = 64 * 1024,
        caFile: String? = nil
    ) {
        self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
        self.timeoutMilliseconds = timeoutMilliseconds
        self.maximumAnswerBytes = maximumAnswerBytes
        self.caFile = caFile
    }
}
