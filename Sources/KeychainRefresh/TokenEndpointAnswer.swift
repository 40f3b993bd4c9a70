import Foundation
import KeychainCore
import KeychainAPI

/// A token endpoint's answer read as RFC 6749 §5 says: 200 with `access_token`, `token_type`
/// (Bearer only: the token becomes a `Bearer` header), `expires_in` and maybe a rotated
/// `refresh_token`; 429 or 503 with a `Retry-After` asks for no call before then; 4xx with an
/// OAuth `error`; anything else is a failure that may pass.
struct TokenEndpointAnswer {
    let status: Int
    let body: [UInt8]
    /// The `Retry-After` header's value, when the answer has one.
    var retryAfter: String? = nil
    /// When the answer arrived: what a `Retry-After` date is counted from.
    var receivedAt = Date()

    func grant() throws(TokenExchangeFailure) -> TokenGrant {
        let json = try? JSONValue.parse(body)
        guard status == 200 else {
            let error = json?["error"]?.stringValue.map { Self.printable($0, limit: 64) }
            let description = json?["error_description"]?.stringValue.map { Self.printable($0, limit: 256) }
            if status == 429 || status == 503, let retryAfter, let seconds = RetryAfter.seconds(retryAfter, receivedAt: receivedAt) {
                throw .throttled(
                    "the token endpoint answered HTTP \(status) with Retry-After" + (error.map { " and error \($0)" } ?? ""),
                    retryAfter: seconds)
            }
            if (400..<500).contains(status), let error, !error.isEmpty {
                throw .refused(error: error, description: description)
            }
            let redirect = (300..<400).contains(status) ? " (redirects are not followed)" : ""
            throw .unavailable(
                "the token endpoint answered HTTP \(status)\(redirect)" + (error.map { " with error \($0)" } ?? ""))
        }
        guard let json, case .string(let accessToken)? = json["access_token"], !accessToken.isEmpty else {
            throw .unavailable("the token endpoint's answer has no access_token")
        }
        guard !BearerToken.hasControlCharacter(accessToken.utf8) else {
            throw .unavailable("the token endpoint's access_token holds a control character")
        }
        guard let tokenType = json["token_type"]?.stringValue, tokenType.lowercased() == "bearer" else {
            throw .unavailable("the token endpoint's answer is not a Bearer token")
        }
        // Bounded as a PUT's expiresIn is (ten years): the lifetime becomes a stored date.
        let lifetimes = 1...TokenMetadata.maximumLifetime
        var expiresIn: Int64?
        switch json["expires_in"] {
        case .integer(let seconds)? where lifetimes.contains(seconds): expiresIn = seconds
        case .string(let text)? where Int64(text).map(lifetimes.contains) == true: expiresIn = Int64(text)
        case nil, .null?: break
        default:
            throw .unavailable(
                "the token endpoint's expires_in is not a whole number of seconds from 1 to \(lifetimes.upperBound)")
        }
        var refreshToken: String?
        switch json["refresh_token"] {
        case .string(let token)? where !token.isEmpty: refreshToken = token
        case nil, .null?: break
        default: throw .unavailable("the token endpoint's refresh_token is not a string")
        }
        return TokenGrant(accessToken: accessToken, refreshToken: refreshToken, expiresIn: expiresIn)
    }

    /// Printable ASCII only (RFC 6749 §5.2 allows no more in `error` and `error_description`),
    /// cut at `limit`: what a provider sends ends up in the state and the log.
    private static func printable(_ text: String, limit: Int) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { (0x20...0x7E).contains($0.value) }.prefix(limit)))
    }
}
