public import Foundation

/// What a PUT stores: the access token, what happens to the refresh token, and when the access
/// token expires.
public struct TokenUpdate: Sendable {
    public enum Refresh: Sendable, Equatable {
        /// `refreshToken` absent: a stored refresh token stays (OAuth 2.0 §6: a refresh answer
        /// without a new refresh token means "keep using the old one").
        case keep
        /// `refreshToken` given: replaces the stored one.
        case set(String)
        /// `refreshToken: null`: the stored one is removed.
        case remove
    }

    public var accessToken: String
    public var refresh: Refresh
    public var expiresAt: Date?

    public init(accessToken: String, refresh: Refresh = .keep, expiresAt: Date? = nil) {
        self.accessToken = accessToken
        self.refresh = refresh
        self.expiresAt = expiresAt
    }
}
