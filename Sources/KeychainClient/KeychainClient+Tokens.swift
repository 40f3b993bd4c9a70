public import Foundation
import KeychainAPI
import KeychainCore
import NIOHTTP1

/// The stored tokens of a service, as `GET /v1/tokens/{service}` answers them.
public struct StoredTokens: Sendable, Equatable {
    public var accessToken: String
    public var refreshToken: String?
    public var expiresAt: Date?
    /// Whether `expiresAt` had passed when the server answered.
    public var expired: Bool

    public init(accessToken: String, refreshToken: String? = nil, expiresAt: Date? = nil, expired: Bool = false) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.expired = expired
    }
}

/// What to do with a stored refresh token when saving new tokens.
public enum RefreshTokenChange: Sendable, Equatable {
    /// Keep whatever is stored (the default: an OAuth refresh often returns no new refresh token).
    case keep
    case replace(String)
    case remove
}

extension KeychainClient {
    /// The token routes' path and query for a service's tokens.
    func tokenRoute(_ naming: TokenNaming, suffix: String = "") -> (String, [QueryParameter]) {
        ("/tokens/" + Self.pathSegment(naming.service) + suffix, naming.queryParameters)
    }

    /// `PUT /v1/tokens/{service}`: stores the access token and (per `refreshToken`) the refresh
    /// token in one transaction. `expiresIn` (seconds) and `expiresAt` are exclusive.
    public func saveTokens(
        service: String, user: String? = nil, accessToken: String, refreshToken: RefreshTokenChange = .keep,
        expiresIn: Int? = nil, expiresAt: Date? = nil, accessGroup: String? = nil
    ) async throws {
        let refresh: TokenUpdate.Refresh =
            switch refreshToken {
            case .keep: .keep
            case .replace(let token): .set(token)
            case .remove: .remove
            }
        let request = TokenPutRequest(
            accessToken: accessToken, refresh: refresh, expiresIn: expiresIn.map(Int64.init), expiresAt: expiresAt)
        let (path, query) = tokenRoute(TokenNaming(service: service, user: user, accessGroup: accessGroup))
        defer { authorizationCache?.forget(service: service, user: user) }
        _ = try await send("PUT", path, query: query, body: request.encoded())
    }

    /// Convenience for the common case: both tokens given, the refresh token optional (nil keeps
    /// a stored one).
    public func saveTokens(
        service: String, user: String? = nil, accessToken: String, refreshToken: String?, expiresIn: Int? = nil
    ) async throws {
        try await saveTokens(
            service: service, user: user, accessToken: accessToken,
            refreshToken: refreshToken.map(RefreshTokenChange.replace) ?? .keep, expiresIn: expiresIn)
    }

    /// `GET /v1/tokens/{service}`: nil when no access token is stored.
    public func tokens(service: String, user: String? = nil, accessGroup: String? = nil) async throws -> StoredTokens? {
        let (path, query) = tokenRoute(TokenNaming(service: service, user: user, accessGroup: accessGroup))
        let answer: TokensAnswer
        do {
            answer = try TokensAnswer(decoding: await send("GET", path, query: query))
        } catch let error as KeychainError where error.code == .itemNotFound {
            return nil
        }
        return StoredTokens(
            accessToken: answer.accessToken, refreshToken: answer.refreshToken, expiresAt: answer.expiresAt,
            expired: answer.expired)
    }

    /// `DELETE /v1/tokens/{service}`: how many items were removed (0 when there were none).
    @discardableResult
    public func deleteTokens(service: String, user: String? = nil, accessGroup: String? = nil) async throws -> Int {
        let (path, query) = tokenRoute(TokenNaming(service: service, user: user, accessGroup: accessGroup))
        defer { authorizationCache?.forget(service: service, user: user) }
        do {
            let answer = try await send("DELETE", path, query: query)
            return (try? StatusAnswer.count(.deleted, in: answer)) ?? 0
        } catch let error as KeychainError where error.code == .itemNotFound {
            return 0
        }
    }

    /// `["Authorization": "Bearer <accessToken>"]` for a service, like seed 002's
    /// `getAuthorizationHeader`: nil when no access token is stored. An access token that is
    /// stored but expired, empty or not text throws errSecItemNotFound whose `detail` says which
    /// (so a caller can refresh it). With `Configuration.cachesAuthorizationHeader`, answered
    /// from this process while the last answer is fresh (`AuthorizationHeaderCache`).
    public func getAuthorizationHeader(service: String, user: String? = nil, accessGroup: String? = nil) async throws
        -> [String: String]?
    {
        let naming = TokenNaming(service: service, user: user, accessGroup: accessGroup)
        if let header = authorizationCache?.header(for: naming) { return ["Authorization": header] }
        let (path, query) = tokenRoute(naming, suffix: "/authorization")
        let asked = authorizationCache?.now()
        let answer: (json: JSONValue, headers: HTTPHeaders)
        do {
            answer = try await sendReadingHeaders("GET", path, query: query)
        } catch let error as KeychainError where error.code == .itemNotFound {
            // Not stored at all → nil; stored but unusable → the server's error (it says why).
            // Told apart by asking again rather than by reading the error's text.
            if try await tokens(service: service, user: user, accessGroup: accessGroup) == nil { return nil }
            throw error
        }
        let header = try AuthorizationAnswer(decoding: answer.json).header
        if let authorizationCache, let asked {
            authorizationCache.keep(
                header, for: naming, freshFor: answer.headers.first(name: AuthorizationAnswer.freshForHeader), askedAt: asked)
        }
        return ["Authorization": header]
    }
}
