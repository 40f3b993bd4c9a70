public import Foundation

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
    /// The token endpoint answered 429 or 503 with a `Retry-After` of `retryAfter` seconds (1 or
    /// more, an HTTP date already turned into seconds from the answer): no call before then.
    case throttled(String, retryAfter: Int64)
    /// No call was made: the provider app is held until `until` (a `Retry-After` it sent, to this
    /// setting or to another with the same token endpoint and client id).
    case held(until: Date, reason: String)

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
        case .throttled(let reason, _): reason
        case .held(_, let reason): "\(reason): no call to the token endpoint before nextRefreshAt"
        }
    }

    /// When the next call may be made, for a failure that says (a hold); nil: back off as usual.
    public var notBefore: Date? {
        if case .held(let until, _) = self { return until }
        return nil
    }
}
