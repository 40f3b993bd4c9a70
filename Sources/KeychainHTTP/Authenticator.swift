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

    /// The client `request`'s token names. Throws `AuthenticationRefusal` for a missing,
    /// malformed, unknown or revoked token, or the store's error when it cannot look it up.
    public func authenticate(_ request: HTTPRequest) throws -> Client {
        guard let header = request.header("authorization") else { throw AuthenticationRefusal.missing }
        guard let token = Self.bearerToken(header) else { throw AuthenticationRefusal.malformed }
        guard let client = try clients.client(forTokenHash: tokens.hash(token)) else { throw AuthenticationRefusal.unknown }
        return client
    }

    /// The caller `access` lets through: nil for an open route, else the authenticated client,
    /// an admin for an admin route (errSecMissingEntitlement for another client). Needs only
    /// the request's head: the transport asks it before it reads a body.
    public func admit(_ request: HTTPRequest, to access: RouteAccess) throws -> Client? {
        guard access != .open else { return nil }
        let client = try authenticate(request)
        if access == .admin, client.role != .admin {
            throw KeychainError.missingEntitlement("this route needs an admin client")
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

/// Why a caller was refused: errSecAuthFailed, with a message that never echoes the token. Its
/// `rawValue` is the reason the audit line gives.
public enum AuthenticationRefusal: String, Error, Sendable {
    /// No `Authorization` header.
    case missing
    /// An `Authorization` header that is not `Bearer <token>`.
    case malformed
    /// A token no client holds: never issued, or revoked.
    case unknown

    public var error: KeychainError {
        switch self {
        case .missing: KeychainError.authFailed("missing Authorization: Bearer token")
        case .malformed: KeychainError.authFailed("the Authorization header must be \"Bearer <token>\"")
        case .unknown: KeychainError.authFailed("unknown or revoked token")
        }
    }
}
