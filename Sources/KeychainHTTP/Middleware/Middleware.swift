/// One step of the application's chain (Hummingbird's `Middleware`, composed at compile time):
/// it sees the request on the way in, hands it to the step it wraps (`next`) or answers itself,
/// and sees the answer on the way out. Each step is generic over the step it wraps, so the chain
/// is one concrete type (`KeychainApplication.Chain`), specialized and inlined as a whole: no
/// existential call, no closure and no copy of the `Exchange` between steps. What a step learns
/// (the client, the audit entry, the OSStatus of the answer) is in the `Exchange` for the steps
/// around it.
protocol Middleware: Sendable {
    func respond(to context: inout RequestContext, _ exchange: inout Exchange) -> HTTPResponse
}
