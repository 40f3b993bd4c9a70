import KeychainCore

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
    /// dropped), or nil when the scheme is another or the token empty. Works on UTF-8 bytes: this
    /// runs on every request.
    static func bearerToken(_ header: String) -> String? {
        let utf8 = header.utf8
        guard utf8.count > 7 else { return nil }
        let scheme = utf8.prefix(7)
        guard zip(scheme, "bearer ".utf8).allSatisfy({ ($0 >= 65 && $0 <= 90 ? $0 | 0x20 : $0) == $1 }) else {
            return nil
        }
        var token = utf8.dropFirst(7)
        while let first = token.first, first == 0x20 || first == 0x09 { token = token.dropFirst() }
        while let last = token.last, last == 0x20 || last == 0x09 { token = token.dropLast() }
        guard !token.isEmpty else { return nil }
        return String(Substring(token))
    }
}
