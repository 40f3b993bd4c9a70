import KeychainCore
public import Logging

/// Authenticates the caller of every route but the open ones (`RouteAccess`) and checks an admin
/// route's caller is an admin. A refused caller gets errSecAuthFailed (or, not an admin,
/// errSecMissingEntitlement) and goes no further: nothing inside (the audit subject, the body,
/// the handler) runs for it. Requests that matched no route pass to the router's 404/405.
public struct AuthenticationMiddleware: Middleware {
    private let authenticator: Authenticator
    /// For errors that are no `KeychainError` (a store that failed).
    private let logger: Logger

    public init(_ authenticator: Authenticator, logger: Logger) {
        self.authenticator = authenticator
        self.logger = logger
    }

    public func respond(to request: HTTPRequest, context: inout RequestContext, next: Next) -> HTTPResponse {
        guard let access = context.route?.access, access != .open else { return next(request, &context) }
        let client: Client
        do {
            client = try authenticator.authenticate(request)
        } catch {
            context.authenticationFailed = (error as? KeychainError)?.code == .authFailed
            return context.answer(error, logger: logger)
        }
        if access == .admin, client.role != .admin {
            return context.answer(KeychainError.missingEntitlement("this route needs an admin client"), logger: logger)
        }
        context.client = client
        return next(request, &context)
    }
}
