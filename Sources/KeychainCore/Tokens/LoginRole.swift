public import Foundation

/// A JWT/OIDC login role (`PUT /v1/admin/auth/jwt/roles/{role}`): which issuer's tokens it
/// admits, how they are checked, and the token a login under it gets. Stored as its JSON.
public struct LoginRole: Sendable, Equatable, Codable {
    /// Where the issuer's keys come from.
    public enum Keys: Sendable, Equatable, Codable {
        /// A JWKS document at this URL.
        case jwksURL(String)
        /// PEM public keys given with the role.
        case publicKeys([String])
        /// The issuer's OpenID discovery document (its `jwks_uri`).
        case discovery
    }

    /// A claim that must be present and match one of `globs` (`*` any run of characters).
    /// `claim` is a top-level claim name, or an RFC 6901 pointer when it begins with `/`.
    public struct BoundClaim: Sendable, Equatable, Codable {
        public var claim: String
        public var globs: [String]

        public init(claim: String, globs: [String]) {
            self.claim = claim
            self.globs = globs
        }
    }

    public var name: String
    public var issuer: String
    public var keys: Keys
    /// PEM of a CA the issuer's https is verified against (in-cluster issuers).
    public var caPEM: String?
    public var audiences: [String]
    public var boundSubject: String?
    public var boundClaims: [BoundClaim]
    public var algorithms: [String]
    public var accessGroups: [String]
    public var tokenTTL: Int64
    public var tokenMaxTTL: Int64
    public var leeway: Int64
    public var maxLiveTokens: Int
    public var allowIssuerAudience: Bool
    /// When it was last written (set by the store, later on every write): a login that read an
    /// older version issues nothing.
    public var updatedAt: Date = Date(timeIntervalSince1970: 0)

    public static let defaultAlgorithms = ["RS256", "ES256"]
    public static let supportedAlgorithms = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"]

    public init(
        name: String, issuer: String, keys: Keys, caPEM: String? = nil, audiences: [String], boundSubject: String? = nil,
        boundClaims: [BoundClaim] = [], algorithms: [String] = LoginRole.defaultAlgorithms, accessGroups: [String],
        tokenTTL: Int64 = 600, tokenMaxTTL: Int64 = 3600, leeway: Int64 = 60, maxLiveTokens: Int = 10_000,
        allowIssuerAudience: Bool = false
    ) {
        self.name = name
        self.issuer = issuer
        self.keys = keys
        self.caPEM = caPEM
        self.audiences = audiences
        self.boundSubject = boundSubject
        self.boundClaims = boundClaims
        self.algorithms = algorithms
        self.accessGroups = accessGroups
        self.tokenTTL = tokenTTL
        self.tokenMaxTTL = tokenMaxTTL
        self.leeway = leeway
        self.maxLiveTokens = maxLiveTokens
        self.allowIssuerAudience = allowIssuerAudience
    }

    /// A role's name: 1-128 of `[a-z0-9._-]`, but not `.` or `..` (HTTP clients remove such path
    /// segments, so the role could not be read or removed).
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 128 && name != "." && name != ".."
            && name.utf8.allSatisfy { (97...122).contains($0) || (48...57).contains($0) || $0 == 46 || $0 == 95 || $0 == 45 }
    }

    /// The lifetime of the tokens a login under this role gets.
    public var tokenLifetime: TokenLifetime { TokenLifetime(ttlSeconds: tokenTTL, maxTTLSeconds: tokenMaxTTL) }

    /// Whether replacing this role by `new` narrows who may hold its tokens or what they reach:
    /// a group or an audience removed, or the issuer, bound subject or bound claims changed.
    /// Such a change revokes the role's live tokens (adding groups or audiences does not).
    public func isTightened(by new: LoginRole) -> Bool {
        func bytes(_ texts: [String]) -> Set<[UInt8]> { Set(texts.map { Array($0.utf8) }) }
        return !bytes(accessGroups).isSubset(of: bytes(new.accessGroups))
            || !bytes(audiences).isSubset(of: bytes(new.audiences))
            || !issuer.utf8.elementsEqual(new.issuer.utf8)
            || boundSubject.map { Array($0.utf8) } != new.boundSubject.map { Array($0.utf8) }
            || boundClaims != new.boundClaims
    }
}

/// The login roles, by name. Throws `KeychainError`.
public protocol LoginRoleStore: Sendable {
    /// Stores `role` (replacing one of the same name) with `updatedAt` = `time`, or a millisecond
    /// after the version it replaces when that is later; returns the role as stored and the one
    /// it replaced, if any.
    func putRole(_ role: LoginRole, at time: Date) throws -> (stored: LoginRole, replaced: LoginRole?)
    func role(named name: String) throws -> LoginRole?
    /// Every role, by name.
    func roles() throws -> [LoginRole]
    /// Removes a role; false when there is none of that name.
    func removeRole(named name: String) throws -> Bool
}
