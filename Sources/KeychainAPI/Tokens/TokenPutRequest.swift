public import Foundation
public import KeychainCore

/// The body of `PUT /tokens/{service}`: `accessToken` (required), `refreshToken` (a string, or
/// null to remove a stored one; absent keeps it), and `expiresIn` (seconds) or `expiresAt`
/// (RFC 3339), not both.
public struct TokenPutRequest: Sendable {
    public var accessToken: String
    public var refresh: TokenUpdate.Refresh
    public var expiresIn: Int64?
    public var expiresAt: Date?

    public init(accessToken: String, refresh: TokenUpdate.Refresh = .keep, expiresIn: Int64? = nil, expiresAt: Date? = nil) {
        self.accessToken = accessToken
        self.refresh = refresh
        self.expiresIn = expiresIn
        self.expiresAt = expiresAt
    }

    /// Decodes a body. Unknown keys, wrong types and conflicting keys are errSecParam; details
    /// name the key, never a token.
    public init(decoding body: JSONBody) throws {
        try ItemArguments.rejectDuplicates(body.members) { $0.0 }
        var accessToken: String?
        self.init(accessToken: "")
        var sawExpiry: String?
        for (name, value) in body.members {
            switch name {
            case "accessToken":
                guard case .string(let token) = value, !token.isEmpty else {
                    throw KeychainError.param("\"accessToken\" must be a non-empty string")
                }
                accessToken = token
            case "refreshToken":
                switch value {
                case .null: refresh = .remove
                case .string(let token) where !token.isEmpty: refresh = .set(token)
                default: throw KeychainError.param("\"refreshToken\" must be a non-empty string or null")
                }
            case "expiresIn", "expiresAt":
                if let other = sawExpiry {
                    throw KeychainError.param("give \"expiresIn\" or \"expiresAt\", not both (\"\(other)\" given)")
                }
                sawExpiry = name
                if name == "expiresIn" {
                    guard case .integer(let seconds) = value, seconds > 0, seconds <= TokenMetadata.maximumLifetime else {
                        throw KeychainError.param(
                            "\"expiresIn\" must be a whole number of seconds from 1 to \(TokenMetadata.maximumLifetime)")
                    }
                    expiresIn = seconds
                } else {
                    guard case .string(let text) = value, let date = RFC3339.parse(text) else {
                        throw KeychainError.param("\"expiresAt\" must be an RFC 3339 date")
                    }
                    expiresAt = date.truncatedToMilliseconds
                }
            default:
                throw KeychainError.param(
                    "unknown key \"\(name)\"; a token body takes accessToken, refreshToken, expiresIn or expiresAt")
            }
        }
        guard let accessToken else { throw KeychainError.param("the body needs \"accessToken\"") }
        self.accessToken = accessToken
    }

    /// What the PUT stores, `expiresIn` counted from `now`.
    public func update(now: Date) -> TokenUpdate {
        let expiry = expiresIn.map { now.addingTimeInterval(TimeInterval($0)).truncatedToMilliseconds } ?? expiresAt
        return TokenUpdate(accessToken: accessToken, refresh: refresh, expiresAt: expiry)
    }

    /// The body that decodes to this request (the client's side).
    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: accessToken.utf8.count + 128) { body in
            body.member("accessToken", accessToken)
            switch refresh {
            case .keep: break
            case .set(let token): body.member("refreshToken", token)
            case .remove:
                body.key("refreshToken")
                body.null()
            }
            if let expiresIn { body.member("expiresIn", expiresIn) }
            if let expiresAt { body.member("expiresAt", expiresAt) }
        }
    }
}
