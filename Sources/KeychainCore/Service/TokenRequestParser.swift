import Foundation

/// Which generic-password items hold a service's tokens (`api.md` "Auth tokens", seed 002):
/// service = `{service}`, account = `accessToken` / `refreshToken`; or, with a user,
/// service = `{service}.accessToken` / `{service}.refreshToken`, account = the user.
public struct TokenNaming: Sendable, Equatable {
    public var service: String
    public var user: String?
    /// Restricts the routes to one of the client's groups (and adds there); nil: the default group
    /// on add, every group of the client on search and delete.
    public var accessGroup: String?

    public init(service: String, user: String? = nil, accessGroup: String? = nil) {
        self.service = service
        self.user = user
        self.accessGroup = accessGroup
    }

    public enum Kind: String, Sendable, CaseIterable {
        case accessToken, refreshToken
    }

    /// The primary-key attributes of one of the two items.
    public func attributes(_ kind: Kind) -> [Attribute: AttributeValue] {
        var attributes: [Attribute: AttributeValue]
        if let user {
            attributes = [.service: .string("\(service).\(kind.rawValue)"), .account: .string(user)]
        } else {
            attributes = [.service: .string(service), .account: .string(kind.rawValue)]
        }
        if let accessGroup { attributes[.accessGroup] = .string(accessGroup) }
        return attributes
    }
}

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

/// Decodes the token routes' query strings and PUT bodies. Unknown keys, wrong types and
/// conflicting keys are errSecParam; details name the key, never a token.
public enum TokenRequestParser {
    /// The longest `expiresIn` accepted: ten years.
    public static let maximumExpiresIn: Int64 = 10 * 366 * 24 * 3600

    /// `?user=NAME&accessGroup=GROUP` of any token route.
    public static func naming(service: String, _ fields: [WireValue.Field]) throws -> TokenNaming {
        guard !service.isEmpty else { throw KeychainError.param("the service in the path is empty") }
        try ItemRequestParser.rejectDuplicates(fields)
        var naming = TokenNaming(service: service)
        for field in fields {
            switch field.name {
            case "user":
                guard let user = field.value.stringValue, !user.isEmpty else {
                    throw KeychainError.param("\"user\" must be a non-empty string")
                }
                naming.user = user
            case "accessGroup":
                guard let group = field.value.stringValue, !group.isEmpty else {
                    throw KeychainError.param("\"accessGroup\" must be a non-empty string")
                }
                naming.accessGroup = group
            default:
                throw KeychainError.param("unknown parameter \"\(field.name)\"; the token routes take user and accessGroup")
            }
        }
        return naming
    }

    /// The PUT body: `accessToken` (required), `refreshToken` (string, or null to remove),
    /// `expiresIn` (seconds from `now`) or `expiresAt` (RFC 3339), not both.
    public static func update(_ fields: [WireValue.Field], now: Date) throws -> TokenUpdate {
        try ItemRequestParser.rejectDuplicates(fields)
        var accessToken: String?
        var refresh = TokenUpdate.Refresh.keep
        var expiresAt: Date?
        var sawExpiry: String?
        for field in fields {
            switch field.name {
            case "accessToken":
                guard case .string(let token) = field.value, !token.isEmpty else {
                    throw KeychainError.param("\"accessToken\" must be a non-empty string")
                }
                accessToken = token
            case "refreshToken":
                switch field.value {
                case .null: refresh = .remove
                case .string(let token) where !token.isEmpty: refresh = .set(token)
                default: throw KeychainError.param("\"refreshToken\" must be a non-empty string or null")
                }
            case "expiresIn":
                if let other = sawExpiry { throw KeychainError.param("give \"expiresIn\" or \"expiresAt\", not both (\"\(other)\" given)") }
                sawExpiry = field.name
                guard case .integer(let seconds) = field.value, seconds > 0, seconds <= maximumExpiresIn else {
                    throw KeychainError.param("\"expiresIn\" must be a whole number of seconds from 1 to \(maximumExpiresIn)")
                }
                expiresAt = now.addingTimeInterval(TimeInterval(seconds)).truncatedToMilliseconds
            case "expiresAt":
                if let other = sawExpiry { throw KeychainError.param("give \"expiresIn\" or \"expiresAt\", not both (\"\(other)\" given)") }
                sawExpiry = field.name
                guard case .string(let text) = field.value, let date = RFC3339.parse(text) else {
                    throw KeychainError.param("\"expiresAt\" must be an RFC 3339 date")
                }
                expiresAt = date.truncatedToMilliseconds
            default:
                throw KeychainError.param(
                    "unknown key \"\(field.name)\"; a token body takes accessToken, refreshToken, expiresIn or expiresAt")
            }
        }
        guard let accessToken else { throw KeychainError.param("the body needs \"accessToken\"") }
        return TokenUpdate(accessToken: accessToken, refresh: refresh, expiresAt: expiresAt)
    }
}
