import KeychainCore
/// The audit log's outcome line, for every request (unmatched and unauthenticated ones included):
/// the entry is begun here, filled in by the steps inside (`AuditSubjectMiddleware` adds the
/// client and the target once the caller is authenticated), and written with the answer's
/// status, OSStatus and time.
public struct AuditLogMiddleware: Middleware {
    private let auditor: Auditor

    public init(_ auditor: Auditor) { self.auditor = auditor }

    public func respond(to request: HTTPRequest, context: inout RequestContext, next: Next) -> HTTPResponse {
        context.audit = auditor.begin(request, route: context.routeName)
        let response = next(request, &context)
        guard var entry = context.audit.take() else { return response }
        entry.client = context.client?.name
        entry.status = response.status
        entry.osStatus = context.osStatus
        entry.microseconds = (context.elapsedNanoseconds() + 500) / 1000
        if entry.subject.persistentRef == nil, let created = response.createdItem {
            entry.subject.persistentRef = created.rawValue
        }
        auditor.recordOutcome(entry)
        return response
    }
}
