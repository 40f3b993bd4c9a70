import KeychainCore

/// After authentication: begins the audit entry with what it says about the request's target
/// (HMAC tags, the body parsed if the route's `AuditTarget` reads it), so none of that work is
/// done for a caller that was refused. When the auditor is fail-closed, the attempt line is
/// written here, before the handler can change anything, and a line that cannot be written
/// refuses the request. With no auditor, passes the request on.
struct AuditSubjectMiddleware<Next: Middleware>: Middleware {
    let auditor: Auditor?
    let next: Next

    func respond(to context: inout RequestContext, _ exchange: inout Exchange) -> HTTPResponse {
        guard let auditor, let route = exchange.route else { return next.respond(to: &context, &exchange) }
        // Filled in where it lies: an entry is a few hundred bytes.
        exchange.audit = auditor.begin(context.request, route: exchange.routeName)
        exchange.audit!.subject = auditor.subject(of: context, target: route.audit)
        if auditor.failClosed {
            exchange.audit!.client = context.client?.name
            exchange.audit!.token = context.token
            do {
                try auditor.recordAttempt(exchange.audit!)
            } catch {
                return exchange.refuse(error)
            }
        }
        return next.respond(to: &context, &exchange)
    }
}
