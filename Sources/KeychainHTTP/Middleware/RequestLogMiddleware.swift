import KeychainCore
public import Logging

/// One `debug` line per request: `GET /tokens/{service}/authorization 200 0.042ms client=app1`.
///
/// At `debug`: the audit log is the record of every request, and the server log is for events
/// (docs/decisions.md, "Request log"). One preformatted message rather than metadata: swift-log's
/// metadata merging cost more than the rest of the line.
public struct RequestLogMiddleware: Middleware {
    private let logger: Logger
    /// Takes the line as bytes; without it, the line goes through `logger` as a `String`.
    private let preformatted: (any PreformattedLog)?

    public init(logger: Logger, preformatted: (any PreformattedLog)? = nil) {
        self.logger = logger
        self.preformatted = preformatted
    }

    public func respond(to request: HTTPRequest, context: inout RequestContext, next: Next) -> HTTPResponse {
        let response = next(request, &context)
        let microseconds = context.elapsedNanoseconds() / 1000
        let route = context.routeName
        let client = context.client?.name
        if preformatted != nil {
            // Called in place: binding the backend to a name would copy it, and its strings with it.
            preformatted?.log(.debug, source: Self.logSource) {
                Self.writeLine(request.method, route, response.status, microseconds: microseconds, client: client, to: &$0)
            }
        } else if logger.logLevel <= .debug {
            let line = Self.line(request.method, route, response.status, microseconds: microseconds, client: client)
            logger.debug("\(line)")
        }
        return response
    }

    /// The `[source]` of the request log's lines, as swift-log derives it: the module's name.
    private static let logSource = String(#fileID.prefix { $0 != "/" })

    /// `GET /tokens/{service}/authorization 200 0.042ms client=app1`.
    static func line(
        _ method: HTTPMethod, _ route: String, _ status: Int, microseconds: UInt64, client: String?
    ) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(96)
        writeLine(method, route, status, microseconds: microseconds, client: client, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the request log's message to `bytes`.
    static func writeLine(
        _ method: HTTPMethod, _ route: String, _ status: Int, microseconds: UInt64, client: String?,
        to bytes: inout [UInt8]
    ) {
        bytes.appendUTF8(method.rawValue)
        bytes.append(UInt8(ascii: " "))
        bytes.appendUTF8(route)
        bytes.append(UInt8(ascii: " "))
        bytes.appendDecimal(Int64(status))
        bytes.append(UInt8(ascii: " "))
        bytes.appendDecimal(microseconds / 1000)
        bytes.append(UInt8(ascii: "."))
        let fraction = microseconds % 1000
        bytes.append(UInt8(48 + fraction / 100))
        bytes.append(UInt8(48 + fraction / 10 % 10))
        bytes.append(UInt8(48 + fraction % 10))
        bytes.append(contentsOf: "ms client=".utf8)
        bytes.appendUTF8(client ?? "-")
    }
}
