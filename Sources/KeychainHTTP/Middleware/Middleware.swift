/// One step of the application's chain (Hummingbird's `Middleware`): it sees the request and
/// its context on the way in, hands them to `next` (or answers itself), and sees the response on
/// the way out. The context is passed `inout`, so what a step learns (the client, the audit
/// entry, the OSStatus of the answer) is there for the steps around it, with no allocation.
public protocol Middleware: Sendable {
    typealias Next = (_ request: HTTPRequest, _ context: inout RequestContext) -> HTTPResponse

    func respond(to request: HTTPRequest, context: inout RequestContext, next: Next) -> HTTPResponse
}
