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
        let scheme = header.prefix(7)
        guard scheme.lowercased() == "bearer ", header.count > 7 else {
            throw KeychainError.authFailed("the Authorization header must be \"Bearer <token>\"")
        }
        let token = String(header.dropFirst(7)).trimmingSpaces()
        guard let client = try clients.client(forTokenHash: tokens.hash(token)) else {
            throw KeychainError.authFailed("unknown or revoked token")
        }
        return client
    }
}

extension String {
    func trimmingSpaces() -> String {
        var view = Substring(self)
        while view.first == " " || view.first == "\t" { view = view.dropFirst() }
        while view.last == " " || view.last == "\t" { view = view.dropLast() }
        return String(view)
    }
}
