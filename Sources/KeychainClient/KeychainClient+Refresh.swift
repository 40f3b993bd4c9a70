public import Foundation
import KeychainAPI
import KeychainCore

/// A service's refresh setting (never its client secret) and where its refresh stands, as
/// `GET /v1/tokens/{service}/refresh` answers them.
public struct RefreshStatus: Sendable, Equatable {
    public enum Grant: String, Sendable {
        case refreshToken = "refresh_token"
        case clientCredentials = "client_credentials"
    }

    public enum ClientAuth: String, Sendable {
        case basic, post
        /// A provider's public client: no secret.
        case none
    }

    public enum State: String, Sendable {
        /// The last exchange (if any) succeeded.
        case ok
        /// The last exchange failed for a reason that may pass; retried after a backoff.
        case failing
        /// The provider refused the grant or the client: store new tokens or a new setting.
        case needsReauth
    }

    public var service: String
    public var user: String?
    public var accessGroup: String
    /// The provider the setting names (its endpoint and client are then the provider's); nil:
    /// a setting of its own.
    public var provider: String?
    public var tokenEndpoint: String
    public var grant: Grant
    public var clientId: String
    public var clientAuth: ClientAuth
    public var scope: String?
    public var audience: String?
    public var refreshBefore: Int
    public var state: State
    public var lastRefreshAt: Date?
    public var nextRefreshAt: Date?
    public var failures: Int
    /// The provider's OAuth error code and description, or what failed; never a token.
    public var lastError: String?

    init(_ answer: RefreshAnswer) {
        service = answer.key.service
        user = answer.key.user
        accessGroup = answer.key.group
        provider = answer.provider
        tokenEndpoint = answer.tokenEndpoint
        grant = answer.grant == .refreshToken ? .refreshToken : .clientCredentials
        clientId = answer.clientId
        clientAuth = ClientAuth(rawValue: answer.clientAuth.rawValue) ?? .basic
        scope = answer.scope
        audience = answer.audience
        refreshBefore = answer.refreshBefore
        state = State(rawValue: answer.state.condition.rawValue) ?? .failing
        lastRefreshAt = answer.state.lastRefreshAt
        nextRefreshAt = answer.state.nextRefreshAt
        failures = answer.state.failures
        lastError = answer.state.lastError
    }
}

extension KeychainClient {
    /// `PUT /v1/tokens/{service}/refresh` (admin clients only): keychaind keeps the service's
    /// tokens fresh itself from `tokenEndpoint` (OAuth 2.0 `refresh_token` or
    /// `client_credentials`); `getAuthorizationHeader` then always answers a valid token.
    @discardableResult
    public func configureRefresh(
        service: String, user: String? = nil, accessGroup: String? = nil, tokenEndpoint: String,
        grant: RefreshStatus.Grant, clientId: String, clientSecret: String, clientAuth: RefreshStatus.ClientAuth = .basic,
        scope: String? = nil, audience: String? = nil, refreshBefore: Int = 60
    ) async throws -> RefreshStatus {
        let setting = RefreshSetting(
            tokenEndpoint: try TokenEndpointURL(tokenEndpoint),
            grant: grant == .refreshToken ? .refreshToken : .clientCredentials, clientId: clientId,
            clientSecret: SecretBytes(utf8: clientSecret), clientAuth: clientAuth == .basic ? .basic : .post, scope: scope,
            audience: audience, refreshBefore: refreshBefore)
        let (path, query) = tokenRoute(
            TokenNaming(service: service, user: user, accessGroup: accessGroup), suffix: "/refresh")
        defer { authorizationCache?.forget(service: service, user: user) }
        let answer = try await send("PUT", path, query: query, body: RefreshPutRequest(setting: setting).encoded())
        return RefreshStatus(try RefreshAnswer(decoding: answer))
    }

    /// `GET /v1/tokens/{service}/refresh`: nil when no refresh setting keeps the service's tokens.
    public func refreshState(service: String, user: String? = nil, accessGroup: String? = nil) async throws
        -> RefreshStatus?
    {
        let (path, query) = tokenRoute(
            TokenNaming(service: service, user: user, accessGroup: accessGroup), suffix: "/refresh")
        do {
            return RefreshStatus(try RefreshAnswer(decoding: await send("GET", path, query: query)))
        } catch let error as KeychainError where error.code == .itemNotFound {
            return nil
        }
    }

    /// `POST /v1/tokens/{service}/refresh`: refreshes now, whatever the state.
    @discardableResult
    public func refreshNow(service: String, user: String? = nil, accessGroup: String? = nil) async throws
        -> RefreshStatus
    {
        let (path, query) = tokenRoute(
            TokenNaming(service: service, user: user, accessGroup: accessGroup), suffix: "/refresh")
        defer { authorizationCache?.forget(service: service, user: user) }
        return RefreshStatus(try RefreshAnswer(decoding: await send("POST", path, query: query)))
    }

    /// `DELETE /v1/tokens/{service}/refresh` (admin): stops refreshing; the tokens stay. False
    /// when there was no setting.
    @discardableResult
    public func removeRefresh(service: String, user: String? = nil, accessGroup: String? = nil) async throws -> Bool {
        let (path, query) = tokenRoute(
            TokenNaming(service: service, user: user, accessGroup: accessGroup), suffix: "/refresh")
        do {
            _ = try await send("DELETE", path, query: query)
            return true
        } catch let error as KeychainError where error.code == .itemNotFound {
            return false
        }
    }
}
