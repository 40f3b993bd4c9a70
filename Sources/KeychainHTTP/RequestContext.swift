#if canImport(Glibc)
import Glibc
#endif
public import KeychainAPI
public import KeychainCore
import Logging
import Synchronization

/// What a handler gets: the request, its route and path parameters, the authenticated client
/// (nil only on open routes), and the body as JSON, parsed when first asked for and kept for the
/// request's later readers: the auditor and the handler read the same parse, and a request nobody
/// asks the body of (every GET) never has it parsed.
///
/// The middleware chain carries it `inout` from step to step; its internal fields are what the
/// steps tell each other.
public struct RequestContext: Sendable {
    public let request: HTTPRequest
    /// The matched route; nil when none matched (the router answers 404 or 405).
    public let route: Router.Route?
    public let parameters: PathParameters
    public internal(set) var client: Client?
    /// Nil for a request without a body: there is nothing to keep (and nothing to allocate on
    /// the token fetch and item read).
    private let parsedBody: ParsedBody?

    /// The route's pattern, `unmatched` when there is none (metrics, logs and audit lines); taken
    /// once, as the pattern's storage is shared by every worker thread.
    let routeName: String
    /// The methods the path has routes for, when it has none for the request's method (405).
    let allowedMethods: [HTTPMethod]
    /// `CLOCK_MONOTONIC` when the request arrived, and when its answer was ready (0 until asked).
    private let started: UInt64
    private var finished: UInt64 = 0
    /// The OSStatus of the answer, set by whoever answered (nil for a handler's answer of 400 and
    /// above that was no error).
    var osStatus: Int32?
    /// Set when authentication refused the request's token (the failed-auth limit counts these).
    var authenticationFailed = false
    /// The audit entry, when the request is audited.
    var audit: Auditor.Entry?

    init(request: HTTPRequest, parameters: PathParameters, client: Client? = nil) {
        self.init(request: request, route: nil, parameters: parameters, allowedMethods: [], client: client)
    }

    /// The context of `request` as `router` matches it.
    init(request: HTTPRequest, router: Router) {
        let started = Self.monotonicNanoseconds()
        switch router.match(method: request.method, path: request.path) {
        case .found(let route, let parameters):
            self.init(request: request, route: route, parameters: parameters, allowedMethods: [], started: started)
        case .methodNotAllowed(let allowed):
            self.init(request: request, route: nil, parameters: [:], allowedMethods: allowed, started: started)
        case .notFound:
            self.init(request: request, route: nil, parameters: [:], allowedMethods: [], started: started)
        }
    }

    private init(
        request: HTTPRequest, route: Router.Route?, parameters: PathParameters, allowedMethods: [HTTPMethod],
        client: Client? = nil, started: UInt64 = 0
    ) {
        self.request = request
        self.route = route
        routeName = route?.pattern ?? "unmatched"
        self.parameters = parameters
        self.allowedMethods = allowedMethods
        self.client = client
        self.started = started
        parsedBody = request.body.isEmpty ? nil : ParsedBody()
    }


    /// Time from routing to the answer; the clock is read once, by the first step that asks
    /// after the answer is ready, and every later step reports the same time.
    mutating func elapsedNanoseconds() -> UInt64 {
        if finished == 0 { finished = Self.monotonicNanoseconds() }
        return finished - started
    }

    /// The answer to `error` (an error that is no `KeychainError` is logged, by type only, and
    /// answered as errSecIO), its OSStatus noted for the audit line.
    mutating func answer(_ error: any Error, logger: Logger) -> HTTPResponse {
        let keychainError: KeychainError
        if let error = error as? KeychainError {
            keychainError = error
        } else {
            logger.error("unexpected error in \(routeName): \(type(of: error))")
            keychainError = KeychainError.io("internal error")
        }
        osStatus = keychainError.status
        return .error(keychainError)
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// The authenticated caller; only open routes have none.
    public var caller: Client {
        guard let client else { preconditionFailure("handler of an open route asked for its caller") }
        return client
    }

    /// The body as one JSON object, parsed at most once per request; errSecParam when it is
    /// not one (an empty body included).
    public func jsonBody() throws -> JSONBody {
        guard let parsedBody else { return try JSONBody(parsing: []) }
        return try parsedBody.value(of: request.body)
    }
}

/// A body's parse, or why it failed, once made.
private final class ParsedBody: Sendable {
    private let result = Mutex<Result<JSONBody, KeychainError>?>(nil)

    func value(of bytes: [UInt8]) throws -> JSONBody {
        try result.withLock { result in
            if let result { return result }
            let parsed = Result { () throws(KeychainError) in try JSONBody(parsing: bytes) }
            result = parsed
            return parsed
        }.get()
    }
}
