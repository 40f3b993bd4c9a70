import KeychainCore
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The HTTP face of keychaind: routing, authentication, the error shape, the request log, the
/// audit log and the request metrics.
/// Transport-free, so tests drive it in process and libmicrohttpd serves it unchanged.
public struct KeychainApplication: HTTPResponder {
    private let router: Router
    private let authenticator: Authenticator
    private let logger: Logger
    /// `logger`'s handler when it is ours: the request log then writes its line straight to the
    /// handler. Any other handler gets the line through `logger`.
    private let requestLog: StandardErrorLogHandler?
    private let auditor: Auditor?
    private let metrics: RequestMetrics?
    private let authFailureLimiter: AuthFailureLimiter?

    public init(
        router: Router, authenticator: Authenticator, logger: Logger, auditor: Auditor? = nil,
        metrics: RequestMetrics? = nil, authFailureLimiter: AuthFailureLimiter? = nil
    ) {
        self.router = router
        self.authenticator = authenticator
        self.logger = logger
        requestLog = logger.handler as? StandardErrorLogHandler
        self.auditor = auditor
        self.metrics = metrics
        self.authFailureLimiter = authFailureLimiter
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let started = Self.monotonicNanoseconds()
        var routeName = "unmatched"
        var clientName: String?
        var osStatus: Int32?
        var audit: Auditor.Entry?
        let response: HTTPResponse
        switch router.match(method: request.method, path: request.path) {
        case .notFound:
            response = .error(
                KeychainError(.unimplemented, "no route \(request.method) \(request.path)"), status: 404)
            osStatus = KeychainError.Code.unimplemented.rawValue
        case .methodNotAllowed(let allowed):
            var answer = HTTPResponse.error(
                KeychainError(.unimplemented, "\(request.method) is not allowed here"), status: 405)
            answer.headers.append(("Allow", allowed.map(\.rawValue).joined(separator: ", ")))
            response = answer
            osStatus = KeychainError.Code.unimplemented.rawValue
        case .found(let route, let parameters):
            routeName = route.pattern
            var context = RequestContext(request: request, parameters: parameters)
            if let auditor {
                audit = auditor.begin(request, route: route.pattern)
                audit?.subject = auditor.subject(of: context)
            }
            do {
                context.client = try authorize(request, for: route.access)
                clientName = context.client?.name
                if let auditor, auditor.failClosed, var attempt = audit {
                    // Write-ahead: the attempt is on record before anything can change.
                    attempt.client = clientName
                    try auditor.recordAttempt(attempt)
                }
                response = try route.handler(context)
                osStatus = response.status < 400 ? 0 : nil
            } catch let limited as TooManyAuthFailures {
                response = limited.response
                osStatus = KeychainError.Code.authFailed.rawValue
            } catch let error as KeychainError {
                response = .error(error)
                osStatus = error.status
            } catch {
                logger.error("unexpected error in \(route.pattern): \(type(of: error))")
                response = .error(KeychainError.io("internal error"))
                osStatus = KeychainError.Code.io.rawValue
            }
        }
        let elapsedNanoseconds = Self.monotonicNanoseconds() - started
        metrics?.record(
            route: routeName, method: request.method, status: response.status,
            seconds: Double(elapsedNanoseconds) / 1_000_000_000)
        if let auditor {
            var entry = audit.take() ?? auditor.begin(request, route: routeName)
            entry.client = clientName
            entry.status = response.status
            entry.osStatus = osStatus
            entry.microseconds = (elapsedNanoseconds + 500) / 1000
            if entry.subject.persistentRef == nil, let created = response.createdItem {
                entry.subject.persistentRef = created.rawValue
            }
            auditor.recordOutcome(entry)
        }
        // The request line is at `debug`: the audit log is the record of every request, and the
        // server log is for events (docs/decisions.md, "Request log"). One preformatted message
        // rather than metadata: swift-log's metadata merging cost more than the rest of the line.
        let microseconds = elapsedNanoseconds / 1000
        if requestLog != nil {
            // Called in place: binding the handler to a name would copy it, and its strings with it.
            requestLog?.log(.debug, source: Self.logSource) {
                Self.writeRequestLine(
                    request.method, routeName, response.status, microseconds: microseconds, client: clientName, to: &$0)
            }
        } else if logger.logLevel <= .debug {
            let line = Self.requestLine(
                request.method, routeName, response.status, microseconds: microseconds, client: clientName)
            logger.debug("\(line)")
        }
        return response
    }

    /// The `[source]` of this file's log lines, as swift-log derives it: the module's name.
    private static let logSource = String(#fileID.prefix { $0 != "/" })

    /// `GET /tokens/{service}/authorization 200 0.042ms client=app1`.
    static func requestLine(
        _ method: HTTPMethod, _ route: String, _ status: Int, microseconds: UInt64, client: String?
    ) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(96)
        writeRequestLine(method, route, status, microseconds: microseconds, client: client, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the request log's message to `bytes`.
    static func writeRequestLine(
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

    private func authorize(_ request: HTTPRequest, for access: RouteAccess) throws -> Client? {
        switch access {
        case .open:
            return nil
        case .client:
            return try authenticate(request)
        case .admin:
            let client = try authenticate(request)
            guard client.role == .admin else {
                throw KeychainError.missingEntitlement("this route needs an admin client")
            }
            return client
        }
    }

    /// The authenticator's answer; a failure beyond the address's budget becomes 429 (the
    /// limiter is consulted only on failure, so valid tokens never wait for it).
    private func authenticate(_ request: HTTPRequest) throws -> Client {
        do {
            return try authenticator.authenticate(request)
        } catch let error as KeychainError where error.code == .authFailed {
            guard let limiter = authFailureLimiter,
                let wait = limiter.recordFailure(from: request.remoteAddress)
            else { throw error }
            throw TooManyAuthFailures(retryAfterSeconds: wait)
        }
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

/// A failed authentication from an address over its budget: 429, `Retry-After`, and the error
/// shape with errSecAuthFailed (an extension of api.md's table, docs/decisions.md "Hardening").
struct TooManyAuthFailures: Error {
    let retryAfterSeconds: Int

    var response: HTTPResponse {
        var answer = HTTPResponse.error(
            KeychainError(
                .authFailed,
                "too many failed authentications from this address; retry after \(retryAfterSeconds) s"),
            status: 429)
        answer.headers.append(("Retry-After", String(retryAfterSeconds)))
        return answer
    }
}
