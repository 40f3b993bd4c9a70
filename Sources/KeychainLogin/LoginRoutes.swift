public import Foundation
import KeychainAPI
public import KeychainCore
public import KeychainHTTP

extension Router {
    /// Login roles (admin: `PUT`/`GET`/`DELETE /admin/auth/jwt/roles/{role}`, `GET
    /// /admin/auth/jwt/roles`) and the logins (`POST /auth/jwt/login`, and the same under
    /// `/auth/kubernetes/login`, where Kubernetes tooling looks). A role PUT that narrows a role,
    /// and a role's removal, revoke its live tokens. A refused login answers 401 with the failed
    /// check and Vault's `errors`, and spends the caller's failed-authentication budget and its
    /// role's (`roleFailures`: past it, a refused login answers 429 whatever its address).
    public mutating func addLoginRoutes(
        login: WorkloadLogin, clients: any ClientStore, roleFailures: AddressBudget?,
        requireUpgradedCluster: @escaping @Sendable () throws -> Void = {}, clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        let roles = login.roles
        add(.put, "/admin/auth/jwt/roles/{role}", access: .admin, audit: .pathParameters) { context in
            let role = try LoginRoleRequest.role(named: context.parameters["role"] ?? "", decoding: context.jsonBody())
            try login.check(role)
            try requireUpgradedCluster()
            let (stored, replaced) = try roles.putRole(role, at: clock())
            if let replaced, replaced.isTightened(by: stored) { _ = try clients.revokeLoginTokens(role: role.name) }
            return .json(LoginRoleAnswer.role(stored))
        }
        add(.get, "/admin/auth/jwt/roles", access: .admin, audit: .none) { _ in
            .json(LoginRoleAnswer.roles(try roles.roles()))
        }
        add(.get, "/admin/auth/jwt/roles/{role}", access: .admin, audit: .pathParameters) { context in
            let name = context.parameters["role"] ?? ""
            guard let role = try roles.role(named: name) else { throw KeychainError.itemNotFound("no login role named \"\(name)\"") }
            return .json(LoginRoleAnswer.role(role))
        }
        add(.delete, "/admin/auth/jwt/roles/{role}", access: .admin, audit: .pathParameters) { context in
            let name = context.parameters["role"] ?? ""
            guard try roles.removeRole(named: name) else { throw KeychainError.itemNotFound("no login role named \"\(name)\"") }
            _ = try clients.revokeLoginTokens(role: name)
            return .json(StatusAnswer.count(.deleted, 1))
        }
        let handler: RouteHandler = { context in
            let request = try LoginRequest(decoding: context.jsonBody())
            let result = Result { () throws(WorkloadLogin.Failure) in try login.login(role: request.role, jwt: request.jwt) }
            switch result {
            case .success(let (token, holder)):
                // A login carries no token to tell the callers apart; every tool written for Vault
                // (hvac, the Go client under bao, its agent and the External Secrets Operator)
                // sends `X-Vault-Request`, keychaind's own clients do not.
                let caller: AuthAnswer.Caller = context.request.header("x-vault-request") == nil ? .native : .vaultTool
                var response = HTTPResponse.json(AuthAnswer.loggedIn(holder, token: token, now: clock(), caller: caller))
                response.issuedToken = holder.token
                return response
            case .failure(let failure):
                return Self.answer(failure, role: request.role, roleFailures: roleFailures)
            }
        }
        add(.post, "/auth/jwt/login", access: .login, audit: .none, handler: handler)
        add(.post, "/auth/kubernetes/login", access: .login, audit: .none, handler: handler)
    }

    /// A failed login's answer, in the native error shape with Vault's `errors` beside.
    private static func answer(_ failure: WorkloadLogin.Failure, role: String, roleFailures: AddressBudget?) -> HTTPResponse {
        let error: KeychainError
        var status: Int?
        var retryAfter: Int?
        var refused = false
        switch failure {
        case .refused(let detail):
            refused = true
            if let wait = roleFailures?.spend(from: "role:\(role)") {
                error = KeychainError(.authFailed, "too many refused logins for this role; retry after \(wait) s")
                status = 429
                retryAfter = wait
            } else {
                error = KeychainError.authFailed(detail)
            }
        case .tooManyTokens:
            error = KeychainError(.param, "the role holds as many live tokens as its maxLiveTokens allows")
            status = 429
        case .keysUnavailable(_, let reason):
            error = KeychainError(.notAvailable, "the issuer's keys cannot be had: \(reason)")
        case .storage(let storageError):
            error = storageError
        }
        var response = HTTPResponse.json(status: status ?? error.httpStatus, ErrorBody(error, vaultErrors: true))
        if error.code == .authFailed { response.headers.append(("WWW-Authenticate", "Bearer")) }
        if let retryAfter { response.headers.append(("Retry-After", String(retryAfter))) }
        response.failedLogin = refused
        return response
    }
}
