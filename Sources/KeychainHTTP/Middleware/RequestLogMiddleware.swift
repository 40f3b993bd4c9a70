import KeychainCore
import Logging

/// One `debug` line per request: `GET /tokens/{service}/authorization 200 0.042ms client=app1`.
///
/// At `debug`: the audit log is the record of every request, and the server log is for events
/// (docs/decisions.md, "Request log"). One preformatted message rather than metadata: swift-log's
/// metadata merging cost more than the rest of the line.
struct RequestLogMiddleware<Next: Middleware>: Middleware {
    /// keychaind's stderr log, or `LoggerLineLog`. Not optional: a method called on an optional
    /// existential copies it (and the backend's strings) first, on every request.
    let log: any PreformattedLog
    let next: Next

    func respond(to context: inout RequestContext, _ exchange: inout Exchange) -> HTTPResponse {
        let response = next.respond(to: &context, &exchange)
        // Off (keychaind's default level is info): nothing of the line is copied out of the request.
        guard log.logLevel <= .debug, exchange.awaited == nil else { return response }
        let microseconds = exchange.elapsedNanoseconds() / 1000
        let method = context.request.method
        let route = exchange.routeName
        let client = context.client?.name
        log.log(.debug, source: RequestLogLine.source) {
            RequestLogLine.write(method, route, response.status, microseconds: microseconds, client: client, to: &$0)
        }
        return response
    }
}

/// The request log through a `Logger` whose backend takes no preformatted lines (tests, or a
/// backend of the embedding program's).
struct LoggerLineLog: PreformattedLog {
    let logger: Logger

    var logLevel: Logger.Level { logger.logLevel }

    func log(_ level: Logger.Level, source: String, message: (inout [UInt8]) -> Void) {
        guard logger.logLevel <= level else { return }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(96)
        message(&bytes)
        logger.log(level: level, "\(String(decoding: bytes, as: UTF8.self))", source: source)
    }
}

/// The request log's line.
enum RequestLogLine {
    /// The `[source]` of the request log's lines, as swift-log derives it: the module's name.
    static let source = String(#fileID.prefix { $0 != "/" })

    /// `GET /tokens/{service}/authorization 200 0.042ms client=app1`.
    static func text(
        _ method: HTTPMethod, _ route: String, _ status: Int, microseconds: UInt64, client: String?
    ) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(96)
        write(method, route, status, microseconds: microseconds, client: client, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the request log's message to `bytes`.
    static func write(
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
