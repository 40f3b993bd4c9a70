import KeychainCore

/// The audit log's outcome line, for every request (unmatched and unauthenticated ones included)
/// but the failed authentications the limit answered 429 (counted by the limiter, not written):
/// the entry `AuditSubjectMiddleware` began for an authenticated caller, or a short one (who,
/// from where, which route, and for a refused token why), written with the answer's status,
/// OSStatus and time. With no auditor, passes the request on.
struct AuditLogMiddleware<Next: Middleware>: Middleware {
    let auditor: Auditor?
    let next: Next

    func respond(to context: inout RequestContext, _ exchange: inout Exchange) -> HTTPResponse {
        let response = next.respond(to: &context, &exchange)
        guard let auditor, !exchange.throttled, exchange.awaited == nil else { return response }
        var entry = exchange.audit.take() ?? auditor.begin(context.request, route: exchange.routeName)
        entry.client = context.client?.name
        entry.status = response.status
        entry.osStatus = exchange.osStatus
        entry.refusal = exchange.refusal
        entry.microseconds = (exchange.elapsedNanoseconds() + 500) / 1000
        if entry.subject.persistentRef == nil, let created = response.createdItem {
            entry.subject.persistentRef = created.rawValue
        }
        auditor.recordOutcome(entry)
        return response
    }
}
