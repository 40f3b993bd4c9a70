import KeychainCore
import Logging

/// Authenticates the caller of every route but the open ones (`Authenticator.admit`) and checks
/// an admin route's caller is an admin. A refused caller gets errSecAuthFailed (or, not an admin,
/// errSecMissingEntitlement) and goes no further: nothing inside (the audit subject, the body,
/// the handler) runs for it. Requests that matched no route pass to the router's 404/405.
/// Headers that name a namespace or two different tokens are errSecParam, on open routes too.
struct AuthenticationMiddleware<Next: Middleware>: Middleware {
    let authenticator: Authenticator
    /// For errors that are no `KeychainError` (a store that failed).
    let logger: Logger
    let next: Next

    func respond(to context: inout RequestContext, _ exchange: inout Exchange) -> HTTPResponse {
        guard let access = exchange.route?.access else { return next.respond(to: &context, &exchange) }
        if access == .login, let tooLarge = RouteAccess.loginBodyRefusal(context.request) {
            return exchange.refuse(tooLarge, status: 413)
        }
        do {
            let credentials = try Credentials(context.request)
            if credentials.header == .vaultToken, exchange.route?.surface == .vaultForVaultToken { exchange.vaultErrors = true }
            let holder = try authenticator.admit(credentials, to: access)
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
