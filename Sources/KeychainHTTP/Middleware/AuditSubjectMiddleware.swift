import KeychainCore
/// After authentication: what the audit entry says about the request's target (HMAC tags, the
/// body parsed if the route's `AuditTarget` reads it), so none of that work is done for a caller
/// that was refused. When the auditor is fail-closed, the attempt line is written here, before
/// the handler can change anything, and a line that cannot be written refuses the request.
public struct AuditSubjectMiddleware: Middleware {
    private let auditor: Auditor

    public init(_ auditor: Auditor) { self.auditor = auditor }

    public func respond(to request: HTTPRequest, context: inout RequestContext, next: Next) -> HTTPResponse {
        guard let route = context.route, context.audit != nil else { return next(request, &context) }
        let subject = auditor.subject(of: context, target: route.audit)
        context.audit?.subject = subject
        if auditor.failClosed, var attempt = context.audit {
            attempt.client = context.client?.name
            do {
                try auditor.recordAttempt(attempt)
            } catch {
                context.osStatus = error.status
                return .error(error)
            }
        }
        return next(request, &context)
    }
}
