import KeychainCore
public import Logging

/// The HTTP face of keychaind: the request is routed once, then passes a chain of middleware and
/// reaches its route's handler. Transport-free, so tests drive it in process and libmicrohttpd
/// serves it unchanged.
///
/// The chain is an array built at start; each request runs it with one `RequestContext` on the
/// stack, passed `inout` from step to step.
public struct KeychainApplication: HTTPResponder {
    private let router: Router
    private let middleware: [any Middleware]
    /// For handlers' errors that are no `KeychainError`.
    private let logger: Logger

    /// Serves `router` behind `middleware`, outermost first.
    public init(router: Router, middleware: [any Middleware], logger: Logger) {
        self.router = router
        self.middleware = middleware
        self.logger = logger
    }

    /// keychaind's chain: request log → metrics → audit log → failed-auth limit → authenticate →
    /// audit subject → router. The parts that are nil are left out.
    public init(
        router: Router, authenticator: Authenticator, logger: Logger, requestLog: (any PreformattedLog)? = nil,
        auditor: Auditor? = nil, metrics: RequestMetrics? = nil, authFailureLimiter: AuthFailureLimiter? = nil
    ) {
        let chain: [(any Middleware)?] = [
            RequestLogMiddleware(logger: logger, preformatted: requestLog),
            metrics.map(MetricsMiddleware.init),
            auditor.map(AuditLogMiddleware.init),
            authFailureLimiter.map(AuthFailureLimitMiddleware.init),
            AuthenticationMiddleware(authenticator, logger: logger),
            auditor.map(AuditSubjectMiddleware.init),
        ]
        self.init(router: router, middleware: chain.compactMap { $0 }, logger: logger)
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        var context = RequestContext(request: request, router: router)
        // Through the array's memory: a step is called where it is, not copied out (each copy
        // would count a reference on a box every worker thread shares).
        return middleware.withUnsafeBufferPointer { steps in
            respond(to: request, context: &context, steps: steps, from: 0)
        }
    }

    /// Runs the chain from its `index`th step; past the last, the route.
    private func respond(
        to request: HTTPRequest, context: inout RequestContext, steps: UnsafeBufferPointer<any Middleware>, from index: Int
    ) -> HTTPResponse {
        guard index < steps.count else { return route(request, context: &context) }
        return steps[index].respond(to: request, context: &context) { request, context in
            respond(to: request, context: &context, steps: steps, from: index + 1)
        }
    }

    /// The route's handler, or 404 (no route has the path) or 405 with `Allow` (no route has the
    /// path with this method), in the contract's error shape.
    private func route(_ request: HTTPRequest, context: inout RequestContext) -> HTTPResponse {
        guard let route = context.route else {
            context.osStatus = KeychainError.Code.unimplemented.rawValue
            guard !context.allowedMethods.isEmpty else {
                return .error(KeychainError(.unimplemented, "no route \(request.method) \(request.path)"), status: 404)
            }
            var answer = HTTPResponse.error(
                KeychainError(.unimplemented, "\(request.method) is not allowed here"), status: 405)
            answer.headers.append(("Allow", context.allowedMethods.map(\.rawValue).joined(separator: ", ")))
            return answer
        }
        do {
            let response = try route.handler(context)
            context.osStatus = response.status < 400 ? 0 : nil
            return response
        } catch {
            return context.answer(error, logger: logger)
        }
    }
}
