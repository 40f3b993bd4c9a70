public import KeychainCore

/// Turns `Authorization: Bearer <token>` into a client: hashes the token and looks the hash up.
/// A missing, malformed, unknown or revoked token is errSecAuthFailed; the detail never echoes it.
public struct Authenticator: Sendable {
    private let clients: any ClientStore
    private let tokens: any ClientTokenIssuer

    public init(clients: any ClientStore, tokens: any ClientTokenIssuer) {
        self.clients = clients
        self.tokens = tokens
    }

    public func authenticate(_ request: HTTPRequest) throws -> Client {
        guard let header = request.header("authorization") else {
            throw KeychainError.authFailed("missing Authorization: Bearer token")
        }
        guard let token = Self.bearerToken(header) else {
            throw KeychainError.authFailed("the Authorization header must be \"Bearer <token>\"")
        }
        guard let client = try clients.client(forTokenHash: tokens.hash(token)) else {
            throw KeychainError.authFailed("unknown or revoked token")
        }
        return client
    }

    /// The token of `Bearer <token>` (scheme case-insensitive, spaces and tabs around the token
    /// dropped), or nil when the scheme is another or the token empty. A slice of `header`, found
    /// on its UTF-8 bytes: this runs on every request, and the token is only hashed.
    static func bearerToken(_ header: String) -> Substring? {
        let bounds = header.withUTF8Bytes { utf8 -> Range<Int>? in
            let scheme = "bearer ".utf8
            guard utf8.count > scheme.count else { return nil }
            for (index, expected) in scheme.enumerated() {
                let byte = utf8[index]
                guard (byte >= 65 && byte <= 90 ? byte | 0x20 : byte) == expected else { return nil }
            }
            var start = scheme.count
            var end = utf8.count
            while start < end, utf8[start] == 0x20 || utf8[start] == 0x09 { start += 1 }
            while end > start, utf8[end - 1] == 0x20 || utf8[end - 1] == 0x09 { end -= 1 }
            return start < end ? start..<end : nil
        }
        guard let bounds else { return nil }
        // The bounds sit next to ASCII bytes (the scheme, spaces, tabs, the end): scalar boundaries.
        let utf8 = header.utf8
        let start = utf8.index(utf8.startIndex, offsetBy: bounds.lowerBound)
        let end = utf8.index(utf8.startIndex, offsetBy: bounds.upperBound)
        return header[start..<end]
    }
}
