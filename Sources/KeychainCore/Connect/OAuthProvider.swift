public import Foundation

/// An OAuth 2.0 provider an admin sets up once (`PUT /v1/admin/providers/{name}`): where its
/// authorization and token endpoints are, the client keychaind is registered as, the scopes a
/// connect session asks for, and which access groups' clients may use it. Refresh settings and
/// connect sessions name it, so that its client secret lives in one place: a new secret reaches
/// every setting that names it at its next exchange.
///
/// The client secret is a secret like any other: sealed where it is stored, bound to its row,
/// never answered, logged or put in an error.
public struct OAuthProvider: Sendable, Equatable {
    /// The parameters keychaind itself puts into an authorization request (RFC 6749 §4.1.1, RFC
    /// 7636 §4.3): `authorizationParams` may not set them.
    public static let reservedAuthorizationParameters: Set<String> = [
        "response_type", "client_id", "redirect_uri", "state", "code_challenge", "code_challenge_method", "scope",
    ]

    public var name: String
    /// Where the browser is sent for consent. keychaind never calls it, but it follows the same
    /// outbound rules as the token endpoint (https, or http to loopback).
    public var authorizationEndpoint: TokenEndpointURL
    public var tokenEndpoint: TokenEndpointURL
    public var clientId: String
    /// Nil only for a public client (`clientAuth` `.none`).
    public var clientSecret: SecretBytes?
    public var clientAuth: RefreshSetting.ClientAuth
    /// The scopes a session asks for when it names none (in this order, space-separated on the wire).
    public var scopes: [String]
    /// The scopes a session may ask for; nil: any. When set, it contains every default scope.
    public var allowedScopes: [String]?
    /// Extra parameters of the authorization request (`access_type=offline`, `prompt=consent`, ...).
    public var authorizationParams: [String: String]
    /// RFC 7009: where a deleted service's refresh token is revoked; nil: no revocation.
    public var revocationEndpoint: TokenEndpointURL?
    /// RFC 9207: the `iss` a callback must carry; nil: not checked.
    public var issuer: String?
    /// The groups whose clients may connect through this provider.
    public var accessGroups: [String]

    public init(
        name: String, authorizationEndpoint: TokenEndpointURL, tokenEndpoint: TokenEndpointURL, clientId: String,
        clientSecret: SecretBytes?, clientAuth: RefreshSetting.ClientAuth = .basic, scopes: [String] = [],
        allowedScopes: [String]? = nil, authorizationParams: [String: String] = [:],
        revocationEndpoint: TokenEndpointURL? = nil, issuer: String? = nil, accessGroups: [String]
    ) {
        self.name = name
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.clientId = clientId
        self.clientSecret = clientSecret
        self.clientAuth = clientAuth
        self.scopes = scopes
        self.allowedScopes = allowedScopes
        self.authorizationParams = authorizationParams
        self.revocationEndpoint = revocationEndpoint
        self.issuer = issuer
        self.accessGroups = accessGroups
    }

    /// A provider's name: 1-128 of `[a-z0-9._-]`, not `.` or `..` (it is a path segment).
    public static func isValidName(_ name: String) -> Bool { LoginRole.isValidName(name) }

    /// Checks the rules that tie the members together; errSecParam naming what is wrong, never
    /// the secret. The wire decoding checks each member's form; this checks what a store would
    /// otherwise keep inconsistent.
    public func validate() throws(KeychainError) {
        guard Self.isValidName(name) else {
            throw KeychainError.param("a provider's name must be 1-128 characters of a-z, 0-9, . _ -")
        }
        guard !clientId.isEmpty else { throw KeychainError.param("\"clientId\" must be a non-empty string") }
        switch (clientAuth, clientSecret) {
        case (.none, .some):
            throw KeychainError.param("\"clientSecret\" is refused with \"clientAuth\": \"none\" (a public client has none)")
        case (.basic, nil), (.post, nil):
            throw KeychainError.param("\"clientSecret\" is required unless \"clientAuth\" is \"none\"")
        case (_, let secret?) where secret.isEmpty:
            throw KeychainError.param("\"clientSecret\" must be a non-empty string")
        default:
            break
        }
        for scope in scopes + (allowedScopes ?? []) where !Self.isValidScope(scope) {
            throw KeychainError.param("scopes must be non-empty and hold no space, quote or backslash (RFC 6749 §3.3)")
        }
        if let allowedScopes {
            let allowed = Set(allowedScopes)
            if let missing = scopes.first(where: { !allowed.contains($0) }) {
                throw KeychainError.param("\"allowedScopes\" must contain every default scope; it lacks \"\(missing)\"")
            }
        }
        if let reserved = authorizationParams.keys.sorted().first(where: Self.reservedAuthorizationParameters.contains) {
            throw KeychainError.param(
                "\"authorizationParams\" may not set \"\(reserved)\": keychaind sends response_type, client_id, "
                    + "redirect_uri, state, code_challenge, code_challenge_method and scope itself")
        }
        if authorizationParams.keys.contains(where: \.isEmpty) {
            throw KeychainError.param("\"authorizationParams\" names must be non-empty")
        }
        if let issuer, issuer.isEmpty { throw KeychainError.param("\"issuer\" must be a non-empty string") }
        guard !accessGroups.isEmpty else { throw KeychainError.param("\"accessGroups\" must name at least one group") }
    }

    /// RFC 6749 §3.3: `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`.
    public static func isValidScope(_ scope: String) -> Bool {
        !scope.isEmpty && scope.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
    }

    /// The `scope` parameter for `scopes` (space-separated), nil when there is none.
    public static func scopeParameter(_ scopes: [String]) -> String? {
        scopes.isEmpty ? nil : scopes.joined(separator: " ")
    }
}

/// The OAuth providers, by name. Throws `KeychainError`. Implementations seal the client secret
/// bound to the provider's row.
public protocol ProviderStore: Sendable {
    /// Stores `provider`, replacing one of the same name; true when it replaced one.
    @discardableResult
    func save(_ provider: OAuthProvider) throws -> Bool
    /// The provider of that name (client secret opened), nil when there is none.
    func provider(named name: String) throws -> OAuthProvider?
    /// Every provider, by name (byte order).
    func list() throws -> [OAuthProvider]
    /// Removes a provider; false when there is none of that name.
    func delete(named name: String) throws -> Bool
}
