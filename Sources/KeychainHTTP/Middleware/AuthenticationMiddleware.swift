import KeychainCore
import Logging

/// Authenticates the caller of every route but the open ones (`Authenticator.admit`) and checks
/// an admin route's caller is an admin. A refused caller gets errSecAuthFailed (or, not an admin,
/// errSecMissingEntitlement) and goes no further: nothing inside (the audit subject, the body,
/// the handler) runs for it. Requests that matched no route pass to the router's 404/405.
struct AuthenticationMiddleware<Next: Middleware>: Middleware {
    let authenticator: Authenticator
    /// For errors that are no `KeychainError` (a store that failed).
    let logger: Logger
    let next: Next

    func respond(to context: inout RequestContext, _ exchange: inout Exchange) -> HTTPResponse {
        guard let access = exchange.route?.access else { return next.respond(to: &context, &exchange) }
        if access == .login, let tooLarge = RouteAccess.loginBodyRefusal(context.request) {
            exchange.osStatus = tooLarge.status
            return .error(tooLarge, status: 413)
        }
        do {
            let holder = try authenticator.admit(context.request, to: access)
            context.client = holder?.client
            context.token = holder?.token
        } catch let refusal as AuthenticationRefusal {
            exchange.refusal = refusal
            return exchange.answer(refusal.error, logger: logger)
        } catch {
            return exchange.answer(error, logger: logger)
        }
        return next.respond(to: &context, &exchange)
    }
}
