public import KeychainCore
public import Logging

/// The HTTP face of keychaind: the request is routed once, then passes a chain of middleware and
/// reaches its route's handler. Transport-free, so tests drive it in process and libmicrohttpd
/// serves it unchanged.
///
/// The chain is one value built at start, each step holding the step it wraps (`Middleware`);
/// each request runs it with its `RequestContext` and `Exchange` on the stack, passed `inout`
/// from step to step.
public struct KeychainApplication: HTTPResponder {
    /// The chain's type, outermost step first; `init` builds it in the same order.
    typealias Chain =
        RequestLogMiddleware<
            MetricsMiddleware<
                AuditLogMiddleware<
                    AuthFailureLimitMiddleware<
                        AuthenticationMiddleware<
                            AuditSubjectMiddleware<
                                RouteResponder>>>>>>

    private let router: Router
    private let authenticator: Authenticator
    private let authFailureLimiter: AuthFailureLimiter?
    private let chain: Chain

    /// keychaind's chain: request log → metrics → audit log → failed-auth limit → authenticate →
    /// audit subject → router. A step whose part is nil passes requests on untouched.
    public init(
        router: Router, authenticator: Authenticator, logger: Logger, requestLog: (any PreformattedLog)? = nil,
        auditor: Auditor? = nil, metrics: RequestMetrics? = nil, authFailureLimiter: AuthFailureLimiter? = nil,
        unauthenticatedAuditLines: AddressBudget? = nil
    ) {
        self.router = router
        self.authenticator = authenticator
        self.authFailureLimiter = authFailureLimiter
        chain =
            RequestLogMiddleware(log: requestLog ?? LoggerLineLog(logger: logger), next:
            MetricsMiddleware(metrics: metrics, next:
            AuditLogMiddleware(auditor: auditor, unauthenticatedLines: unauthenticatedAuditLines, next:
            AuthFailureLimitMiddleware(limiter: authFailureLimiter, next:
            AuthenticationMiddleware(authenticator: authenticator, logger: logger, next:
            AuditSubjectMiddleware(auditor: auditor, next:
            RouteResponder(logger: logger)))))))
    }

    public func respond(to request: HTTPRequest, exchangeWait: ExchangeWait) -> HTTPResponse {
        respond(to: request, exchangeWait: exchangeWait, started: Exchange.monotonicNanoseconds())
    }

    /// The answer; one deferred for a token exchange is answered again, from what is stored then,
    /// timed from the request's first routing.
    private func respond(to request: HTTPRequest, exchangeWait: ExchangeWait, started: UInt64) -> HTTPResponse {
        let match = router.match(method: request.method, path: request.path)
        return run(request, match, started: started, exchangeWait: exchangeWait)
    }

    /// Nil when the request's body is to be read: its route takes the caller its head names (or
    /// is open). Otherwise the chain's answer to the head alone, as it would answer the whole
    /// request (404, 405, 401, 429, 403), logged, counted and audited as that answer.
    public func respond(toHead request: HTTPRequest) -> HTTPResponse? {
        let started = Exchange.monotonicNanoseconds()
        let match = router.match(method: request.method, path: request.path)
        if case .found(let route, _) = match {
            switch route.access {
            case .open:
                return nil
            case .login:
                // Its body is read only within the caller's failed-authentication budget and bound.
                if authFailureLimiter?.isSpent(for: request.remoteAddress) != true,
                    RouteAccess.loginBodyRefusal(request) == nil
                {
                    return nil
                }
            case .client, .admin:
                if (try? authenticator.admit(request, to: route.access)) != nil { return nil }
            }
        }
        return run(request, match, started: started, exchangeWait: .block)
    }

    /// The transport's refusal in its route's shape: Vault's on the Vault surface (and on a
    /// self-service route called with `X-Vault-Token`), else keychaind's.
    public func refusal(_ error: KeychainError, status: Int?, to head: HTTPRequest) -> HTTPResponse {
        guard case .found(let route, _) = router.match(method: head.method, path: head.path) else {
            return .error(error, status: status)
        }
        var exchange = Exchange(route: route, allowedMethods: [], started: 0)
        if route.surface == .vaultForVaultToken, (try? Credentials(head))?.header == .vaultToken { exchange.vaultErrors = true }
        return exchange.refuse(error, status: status)
    }

    /// Runs the chain for `request` as the router matched it.
    private func run(
        _ request: HTTPRequest, _ match: consuming Router.Match, started: UInt64, exchangeWait: ExchangeWait
    ) -> HTTPResponse {
        var route: Router.Route?
        var parameters = PathParameters()
        var allowed: [HTTPMethod] = []
        var allowedOnVaultSurface = false
        switch consume match {
        case .found(let found, let foundParameters):
            route = found
            parameters = foundParameters
        case .methodNotAllowed(let methods, let surface):
            allowed = methods
            allowedOnVaultSurface = surface == .vault
        case .notFound:
            break
        }
        var exchange = Exchange(route: route, allowedMethods: allowed, started: started)
        if allowedOnVaultSurface { exchange.vaultErrors = true }
        var context = RequestContext(request: request, parameters: parameters, exchangeWait: exchangeWait)
        var response = chain.respond(to: &context, &exchange)
        if let awaited = exchange.awaited {
            response.deferred = DeferredAnswer(exchange: awaited.exchange, waitLimit: awaited.waitLimit) { [self] in
                respond(to: request, exchangeWait: .stored, started: started)
            }
        }
        return response
    }
}
