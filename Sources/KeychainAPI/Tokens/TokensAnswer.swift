public import Foundation
public import KeychainCore

/// The answer of `GET /tokens/{service}`:
/// `{"accessToken":…,"refreshToken":…|null,"expiresAt":…|null,"expired":…}`.
public struct TokensAnswer: JSONAnswer {
    public var accessToken: String
    public var refreshToken: String?
    public var expiresAt: Date?
    /// Whether `expiresAt` had passed when the server answered.
    public var expired: Bool

    public init(accessToken: String, refreshToken: String?, expiresAt: Date?, expired: Bool) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.expired = expired
    }

    public init(_ tokens: TokenService.Tokens) {
        self.init(
            accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, expiresAt: tokens.expiresAt,
            expired: tokens.expired)
    }

    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: accessToken.utf8.count + (refreshToken?.utf8.count ?? 0) + 128) { answer in
            answer.member("accessToken", accessToken)
            answer.member("refreshToken", refreshToken)
            answer.member("expiresAt", expiresAt)
            answer.member("expired", expired)
        }
    }

    /// The answer as the client reads it: `accessToken` is required, the rest optional.
    public init(decoding json: JSONValue) throws {
        accessToken = try json.requiredString("accessToken", of: "the tokens answer")
        refreshToken = json["refreshToken"]?.stringValue
        expiresAt = json["expiresAt"]?.stringValue.flatMap(RFC3339.parse)
        if case .bool(let flag)? = json["expired"] { expired = flag } else { expired = false }
    }
}
