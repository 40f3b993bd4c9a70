public import Foundation
public import KeychainCore
import KeychainAPI
import KeychainJOSE
public import Logging
import Synchronization

/// Workload login (`POST /v1/auth/jwt/login`): a JWT from an OpenID Connect issuer, checked
/// against a login role, buys a short-lived token of the role's groups. Every check of
/// docs/api.md's "Workload login" runs here; the routes (`addLoginRoutes`) only translate.
public final class WorkloadLogin: Sendable {
    /// How a login failed. `refused` is 401 with `detail` naming the failed check (never the JWT
    /// or a claim's value); `tooManyTokens` 429; `keysUnavailable` 503 (the issuer's keys could
    /// not be had: not the caller's fault, and not counted against it).
    public enum Failure: Error, Sendable {
        case refused(detail: String)
        case tooManyTokens(role: String)
        case keysUnavailable(role: String, reason: String)
        case storage(KeychainError)
    }

    public let roles: any LoginRoleStore
    private let clients: any ClientStore
    private let issuer: any ClientTokenIssuer
    private let keys: IssuerKeys
    private let clock: @Sendable () -> Date
    public let metrics = LoginMetrics()

    public init(
        roles: any LoginRoleStore, clients: any ClientStore, issuer: any ClientTokenIssuer,
        fetcher: any IssuerDocumentFetcher, staleSeconds: Int = 3600, logger: Logger,
        clock: @escaping @Sendable () -> Date = Date.init
    ) {
        self.roles = roles
        self.clients = clients
        self.issuer = issuer
        self.clock = clock
        keys = IssuerKeys(fetcher: fetcher, staleSeconds: Double(staleSeconds), logger: logger)
    }

    /// Logins served from an issuer's last good key set while the issuer was unreachable.
    public var staleKeySetServes: UInt64 { keys.staleServes }

    /// Checks what a role's PUT body could not (its PEM keys parse); errSecParam.
    public func check(_ role: LoginRole) throws {
        if case .publicKeys(let pems) = role.keys { try IssuerKeys.checkPEMKeys(pems) }
    }

    /// Verifies `jwt` against the role `roleName` and issues a token: the token (shown once) and
    /// its holder.
    public func login(role roleName: String, jwt: String) throws(Failure) -> (token: String, holder: TokenHolder) {
        do {
            let result = try attempt(roleName: roleName, jwt: jwt)
            metrics.count(role: roleName, .success)
            return result
        } catch {
            switch error {
            case .refused(let detail): metrics.count(role: detail == "unknown role" ? "" : roleName, .refused)
            case .tooManyTokens: metrics.count(role: roleName, .tooManyTokens)
            case .keysUnavailable: metrics.count(role: roleName, .keysUnavailable)
            case .storage: metrics.count(role: roleName, .error)
            }
            throw error
        }
    }

    private func attempt(roleName: String, jwt: String) throws(Failure) -> (token: String, holder: TokenHolder) {
        let role: LoginRole
        do {
            guard LoginRole.isValidName(roleName), let found = try roles.role(named: roleName) else {
                throw Failure.refused(detail: "unknown role")
            }
            role = found
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .storage(Self.keychainError(error))
        }
        let jws: CompactJWS
        do { jws = try CompactJWS(parsing: jwt) } catch { throw .refused(detail: error.detail) }
        let allowed = Set(role.algorithms.compactMap(JWSAlgorithm.init(rawValue:)))
        do {
            try verify(jws, role: role, allowed: allowed)
            let policy = JWTClaimsPolicy(
                issuer: role.issuer, audiences: role.audiences, boundSubject: role.boundSubject,
                boundClaims: role.boundClaims,
                leeway: TimeInterval(role.leeway))
            try policy.check(jws.claims, now: clock())
        } catch let refusal as JWTRefusal {
            throw .refused(detail: refusal.detail)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .keysUnavailable(role: role.name, reason: "\(error)")
        }
        return try issue(for: role, subject: jws.claims["sub"]?.stringValue)
    }

    /// The signature by one of the role's issuer's keys; an unknown `kid` fetches the key set
    /// again once (when due) before it is refused.
    private func verify(_ jws: CompactJWS, role: LoginRole, allowed: Set<JWSAlgorithm>) throws {
        guard let current = try keys.keys(for: role) else { throw JWTRefusal.signature }
        do {
            try JWSVerifier.verify(jws, keys: current, allowed: allowed)
        } catch .unknownKeyID {
            guard let refetched = try keys.keys(for: role, refetch: true) else { throw JWTRefusal.signature }
            try JWSVerifier.verify(jws, keys: refetched, allowed: allowed)
        }
    }

    /// Stores a token for `role` within its live-token bound. A role written after this login
    /// read it (a PUT that tightened it, or its removal, whose revocation may have run before
    /// this token existed) takes the token back: nothing issued under an old version survives.
    private func issue(for role: LoginRole, subject: String?) throws(Failure) -> (token: String, holder: TokenHolder) {
        let now = clock()
        let (token, new) = issuer.issue(for: .login(role: role.name), subject: subject, lifetime: role.tokenLifetime, now: now)
        do {
            guard try clients.addLoginToken(new, accessGroups: role.accessGroups, liveLimit: role.maxLiveTokens, now: now) else {
                throw Failure.tooManyTokens(role: role.name)
            }
            guard try roles.role(named: role.name)?.updatedAt == role.updatedAt else {
                _ = try clients.revokeToken(accessor: new.record.accessor, now: now)
                throw Failure.refused(detail: "unknown role")
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .storage(Self.keychainError(error))
        }
        let holder = Client(name: new.record.holderName, accessGroups: role.accessGroups, role: .client, createdAt: now)
        return (token, TokenHolder(client: holder, token: new.record))
    }

    private static func keychainError(_ error: any Error) -> KeychainError {
        (error as? KeychainError) ?? KeychainError.io("\(error)")
    }
}

/// Logins by role and outcome, for `/v1/metrics`. Roles are the admin's (bounded); a login naming
/// no known role is counted under the empty role name, so callers cannot grow the label set.
public final class LoginMetrics: Sendable {
    public enum Outcome: String, Sendable, CaseIterable {
        case success, refused, tooManyTokens = "too_many_tokens", keysUnavailable = "keys_unavailable", error
    }

    private let counts = Mutex([String: [Outcome: UInt64]]())
    /// Beyond this many role names the rest are counted under the empty name.
    static let maximumRoles = 1000

    func count(role: String, _ outcome: Outcome) {
        counts.withLock { counts in
            var name = LoginRole.isValidName(role) ? role : ""
            if counts[name] == nil, counts.count >= Self.maximumRoles { name = "" }
            counts[name, default: [:]][outcome, default: 0] += 1
        }
    }

    /// Every count so far: role, outcome, logins.
    public func snapshot() -> [(role: String, outcome: Outcome, count: UInt64)] {
        counts.withLock { counts in
            counts.sorted { $0.key < $1.key }.flatMap { role, outcomes in
                Outcome.allCases.compactMap { outcome in outcomes[outcome].map { (role, outcome, $0) } }
            }
        }
    }
}
