public import KeychainCore

/// The body of `POST /v1/auth/token/renew-self`: `{"increment"?}` (seconds, or a duration such as
/// `"30m"`; null or absent: the token's TTL at issue). An empty body is an empty request.
public struct RenewRequest: Sendable {
    public var incrementSeconds: Int64?

    public init(decoding body: JSONBody?) throws {
        for (key, value) in body?.members ?? [] {
            switch key {
            case "increment":
                if value != .null { incrementSeconds = try DurationSeconds.parse(value, key: "increment") }
            default:
                throw KeychainError.param("unknown key \"\(key)\"")
            }
        }
    }
}
