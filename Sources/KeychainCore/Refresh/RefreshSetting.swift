public import Foundation

/// How keychaind itself gets a new access token for a service from its provider's token endpoint
/// (docs/api.md, "Keeping tokens fresh"; RFC 6749 §6 and §4.4). The client secret is a secret like
/// any other: sealed where it is stored, never answered, logged or put in an error.
public struct RefreshSetting: Sendable, Equatable {
    /// The OAuth 2.0 grant the exchange uses.
    public enum Grant: String, Sendable, CaseIterable {
        /// RFC 6749 §6: trades the stored refresh token for new tokens.
        case refreshToken = "refresh_token"
        /// RFC 6749 §4.4: machine-to-machine, no user and no refresh token.
        case clientCredentials = "client_credentials"
    }

    /// How the client authenticates to the token endpoint (RFC 6749 §2.3.1).
    public enum ClientAuth: String, Sendable, CaseIterable {
        /// HTTP Basic with the form-encoded client id and secret.
        case basic
        /// `client_id` and `client_secret` in the form body.
        case post
        /// A public client (RFC 6749 §2.1): `client_id` in the form body, no secret. Only a
        /// provider's; a setting of its own authenticates with a secret.
        case none
    }

    /// Seconds before expiry at which a token is renewed, when the setting does not say.
    public static let defaultRefreshBefore = 60
    /// The longest `refreshBefore` accepted: one day.
    public static let maximumRefreshBefore = 86_400

    /// The provider whose endpoint and client this setting uses, by name; nil: its own. A
    /// setting that names a provider is read with the provider's `tokenEndpoint`, `clientId`,
    /// `clientSecret` and `clientAuth` filled in (`init(provider:...)`) every time it is read, so
    /// that an exchange always uses the provider as it is stored then; only the name is stored.
    public var provider: String?
    public var tokenEndpoint: TokenEndpointURL
    public var grant: Grant
    public var clientId: String
    /// Empty for a provider's public client (`clientAuth` `.none`).
    public var clientSecret: SecretBytes
    public var clientAuth: ClientAuth
    public var scope: String?
    public var audience: String?
    /// Seconds before expiry at which the access token counts as due.
    public var refreshBefore: Int

    public init(
        tokenEndpoint: TokenEndpointURL, grant: Grant, clientId: String, clientSecret: SecretBytes,
        clientAuth: ClientAuth = .basic, scope: String? = nil, audience: String? = nil,
        refreshBefore: Int = RefreshSetting.defaultRefreshBefore
    ) {
        self.tokenEndpoint = tokenEndpoint
        self.grant = grant
        self.clientId = clientId
        self.clientSecret = clientSecret
        self.clientAuth = clientAuth
        self.scope = scope
        self.audience = audience
        self.refreshBefore = refreshBefore
    }

    /// A setting that names `provider`: its endpoint and client are the provider's (as stored
    /// now; read again with the setting at every exchange).
    public init(
        provider: OAuthProvider, grant: Grant = .refreshToken, scope: String? = nil,
        refreshBefore: Int = RefreshSetting.defaultRefreshBefore
    ) {
        self.init(
            tokenEndpoint: provider.tokenEndpoint, grant: grant, clientId: provider.clientId,
            clientSecret: provider.clientSecret ?? SecretBytes([UInt8](), lockedInMemory: false),
            clientAuth: provider.clientAuth, scope: scope, refreshBefore: refreshBefore)
        self.provider = provider.name
    }
}

/// Where a service's refresh stands: what `GET /tokens/{service}/refresh` answers besides the
/// setting, and what the refresher decides by.
public struct RefreshState: Sendable, Equatable {
    public enum Condition: String, Sendable, CaseIterable {
        /// The last exchange (if any) succeeded.
        case ok
        /// The last exchange failed for a reason that may pass (network, 5xx, timeout): retried
        /// after `nextRefreshAt`.
        case failing
        /// The provider refused the grant or the client (`invalid_grant`, `invalid_client`): no
        /// more calls until new tokens are stored or the setting is replaced.
        case needsReauth
    }

    public var condition: Condition
    public var lastRefreshAt: Date?
    /// When the next exchange is due: `refreshBefore` ahead of expiry, or the end of a backoff.
    public var nextRefreshAt: Date?
    /// Failed exchanges since the last success.
    public var failures: Int
    /// The provider's OAuth `error` code and description, or what failed on the way; never a token.
    public var lastError: String?

    public init(
        condition: Condition = .ok, lastRefreshAt: Date? = nil, nextRefreshAt: Date? = nil, failures: Int = 0,
        lastError: String? = nil
    ) {
        self.condition = condition
        self.lastRefreshAt = lastRefreshAt
        self.nextRefreshAt = nextRefreshAt
        self.failures = failures
        self.lastError = lastError
    }

    /// Whether the state holds off calls to the provider at `now`: needsReauth, or failing within
    /// its backoff. A client's "refresh now" is answered without a call then (an admin's is not).
    public func holdsOffCalls(at now: Date) -> Bool {
        switch condition {
        case .ok: false
        case .needsReauth: true
        case .failing: nextRefreshAt.map { $0 > now } ?? false
        }
    }
}
