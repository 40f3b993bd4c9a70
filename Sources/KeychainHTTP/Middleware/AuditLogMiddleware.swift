import KeychainCore

/// The audit log's outcome line, for every request (unmatched and unauthenticated ones included)
/// but health probes (`AuditTarget.unaudited`), the failed authentications the limit answered
/// 429 (counted by the limiter, not written), and lines of requests without a caller or a token
/// past their address's budget (`unauthenticatedLines`; counted there): the entry
/// `AuditSubjectMiddleware` began for an authenticated caller, or a short one (who, from where,
/// which route, and for a refused token why), written with the answer's status, OSStatus and
/// time. With no auditor, passes the request on.
struct AuditLogMiddleware<Next: Middleware>: Middleware {
    let auditor: Auditor?
    /// Lines of requests that name no caller (no token: unmatched routes and open ones) per
    /// address; nil: no bound. Refused tokens are bounded by the failed-auth limit instead.
    let unauthenticatedLines: AddressBudget?
    let next: Next

    func respond(to context: inout RequestContext, _ exchange: inout Exchange) -> HTTPResponse {
        let response = next.respond(to: &context, &exchange)
        guard let auditor, !exchange.throttled, exchange.awaited == nil, exchange.route?.audit != .unaudited else {
            return response
        }
        // A login that issued a token is audited as an authenticated request is: always.
        if context.client == nil, exchange.refusal == nil, response.issuedToken == nil, let unauthenticatedLines,
            unauthenticatedLines.spend(from: context.request.remoteAddress) != nil
        {
            return response
        }
        var entry = exchange.audit.take() ?? auditor.begin(context.request, route: exchange.routeName)
        entry.client = context.client?.name ?? response.issuedToken?.holderName
        entry.token = context.token ?? response.issuedToken
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
