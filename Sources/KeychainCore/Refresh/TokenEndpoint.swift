import Foundation

/// What calls a provider's token endpoint (and its revocation endpoint): `TokenEndpointClient`
/// (libcurl) in KeychainRefresh.
public protocol TokenEndpoint: Sendable {
    /// One exchange (RFC 6749 §6 or §4.4, as `setting.grant` says), its answer checked.
    func exchange(_ setting: RefreshSetting, refreshToken: SecretBytes?) throws(TokenExchangeFailure) -> TokenGrant
    /// RFC 7009: revokes `refreshToken` at `provider`'s revocation endpoint (nothing when it has
    /// none); throws when the provider did not answer 200.
    func revoke(_ refreshToken: SecretBytes, at provider: OAuthProvider) throws(TokenExchangeFailure)
}

/// What a successful exchange brings: a bearer access token, maybe a rotated refresh token, and
/// the lifetime the provider gave it.
public struct TokenGrant: Sendable {
    public var accessToken: String
    /// A new refresh token (rotation); nil: keep the stored one (RFC 6749 §6).
    public var refreshToken: String?
    /// Seconds the access token lives; nil when the provider did not say.
    public var expiresIn: Int64?

    public init(accessToken: String, refreshToken: String? = nil, expiresIn: Int64? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
    }
}

/// Why an exchange gave no tokens. Descriptions never carry a token or the client secret.
public enum TokenExchangeFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The provider answered an OAuth error (RFC 6749 §5.2): its `error` code and description.
    case refused(error: String, description: String?)
    /// No usable answer: network, TLS, timeout, a 5xx or an answer that is not a token.
    case unavailable(String)

    /// `invalid_grant` and `invalid_client` will not pass by retrying: the service needs new
    /// tokens or a new setting.
    public var needsReauth: Bool {
        if case .refused(let error, _) = self { return error == "invalid_grant" || error == "invalid_client" }
        return false
    }

    public var description: String {
        switch self {
        case .refused(let error, let description): description.map { "\(error): \($0)" } ?? error
        case .unavailable(let reason): reason
        }
    }
}
