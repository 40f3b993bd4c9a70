public import Foundation
import KeychainAPI
public import KeychainCore

extension Router {
    /// A token's self-service (`/auth/token/self`, `lookup-self`, `renew-self`, `revoke-self`:
    /// any token, its own) and the admin's view of live tokens (list by client or login role,
    /// revoke by accessor). None of them needs the vault's keys: they keep working while it is
    /// locked. Vault's `/auth/token/renew` and `/revoke` (which take another token in the body)
    /// are not served. `lookup-self`, `renew-self` and `revoke-self` answer errors in Vault's shape
    /// when the token came in `X-Vault-Token` (hvac's `is_authenticated` needs 403, not 401).
    public mutating func addAuthTokenRoutes(
        clients: any ClientStore, clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        /// The caller's token as stored now (a renewal on another node shows), else unknown.
        @Sendable func current(_ context: RequestContext) throws -> TokenHolder {
            guard let holder = try clients.holder(ofAccessor: context.callerToken.accessor) else {
                throw AuthenticationRefusal.unknown.error
            }
            return holder
        }
        /// The token the caller presented (Vault's answers give it back as `id`, `client_token`),
        /// and who reads the answer: a tool written for Vault when it came in `X-Vault-Token`, as
        /// for the routes' errors (`RouteSurface.vaultForVaultToken`).
        @Sendable func presented(_ context: RequestContext) -> (token: String, caller: AuthAnswer.Caller) {
            let credentials = try? Credentials(context.request)
            return (credentials?.token.map(String.init) ?? "", credentials?.header == .vaultToken ? .vaultTool : .native)
        }
        add(.get, "/auth/token/self", access: .client, audit: .none) { context in
            .json(AuthAnswer.lookup(try current(context), now: clock(), vaultToken: nil, caller: .native))
        }
        add(.get, "/auth/token/lookup-self", access: .client, audit: .none, surface: .vaultForVaultToken) { context in
            let (token, caller) = presented(context)
            return .json(AuthAnswer.lookup(try current(context), now: clock(), vaultToken: token, caller: caller))
        }
        add(.post, "/auth/token/renew-self", access: .client, audit: .none, surface: .vaultForVaultToken) { context in
            let request = try RenewRequest(decoding: context.request.body.isEmpty ? nil : context.jsonBody())
            let holder = try current(context)
            // To the millisecond, as stores keep it: the renewal's time is recorded (`lastRenewal`).
            let now = clock().truncatedToMilliseconds
            guard let expiresAt = holder.token.renewedExpiry(at: now, increment: request.incrementSeconds) else {
                throw KeychainError.param("this token is not renewable: it never expires")
            }
            guard let renewed = try clients.renewToken(accessor: holder.token.accessor, expiresAt: expiresAt, now: now) else {
                throw AuthenticationRefusal.unknown.error
            }
            let (token, caller) = presented(context)
            return .json(AuthAnswer.renewed(TokenHolder(client: holder.client, token: renewed), token: token, now: now, caller: caller))
        }
        add(.post, "/auth/token/revoke-self", access: .client, audit: .none, surface: .vaultForVaultToken) { context in
            // The store refuses the last live admin token (errSecParam) in the same step.
            _ = try clients.revokeToken(accessor: context.callerToken.accessor, now: clock())
            return .json(StatusAnswer.done)
        }
        add(.get, "/admin/tokens", access: .admin, audit: .none) { context in
            let items = context.request.queryItems
            let owner: TokenOwner
            switch (items.count, items.first?.name) {
            case (1, "client"): owner = .client(items[0].value)
            case (1, "role"): owner = .loginRole(items[0].value)
            default: throw KeychainError.param("give one of ?client=NAME or ?role=ROLE")
            }
            return .json(AuthAnswer.tokens(try clients.tokens(of: owner, now: clock())))
        }
        add(.delete, "/admin/tokens/{accessor}", access: .admin, audit: .pathParameters) { context in
            let accessor = context.parameters["accessor"] ?? ""
            guard TokenAccessor.isWellFormed(accessor), try clients.revokeToken(accessor: accessor, now: clock()) else {
                throw KeychainError.itemNotFound("no token has this accessor")
            }
            return .json(StatusAnswer.count(.deleted, 1))
        }
    }
}
