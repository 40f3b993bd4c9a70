public import Foundation
public import KeychainCore

/// Turns the token a request presents (`Authorization: Bearer <token>`, or Vault's
/// `X-Vault-Token`) into its holder: hashes the token and looks the hash up. A missing, malformed,
/// unknown, revoked or expired token is errSecAuthFailed; the detail never echoes it.
public struct Authenticator: Sendable {
    private let clients: any ClientStore
    private let tokens: any ClientTokenIssuer
    private let clock: @Sendable () -> Date

    public init(clients: any ClientStore, tokens: any ClientTokenIssuer, clock: @escaping @Sendable () -> Date = Date.init) {
        self.clients = clients
        self.tokens = tokens
        self.clock = clock
    }

    /// The holder of the token `credentials` carry. Throws `AuthenticationRefusal` for a missing,
    /// malformed, unknown, revoked or expired token, or the store's error when it cannot look it up.
    public func authenticate(_ credentials: Credentials) throws -> TokenHolder {
        guard let token = credentials.token else {
            throw credentials.header == nil ? AuthenticationRefusal.missing : AuthenticationRefusal.malformed
        }
        guard let holder = try clients.holder(ofTokenHash: tokens.hash(token)) else { throw AuthenticationRefusal.unknown }
        if holder.token.expiresAt != nil, holder.token.isExpired(at: clock()) { throw AuthenticationRefusal.expired }
        return holder
    }

    /// The caller `access` lets through: nil for an open route, else the authenticated holder,
    /// an admin for an admin route (errSecMissingEntitlement for another client). Needs only
    /// the request's head: the transport asks it before it reads a body.
    public func admit(_ credentials: Credentials, to access: RouteAccess) throws -> TokenHolder? {
        guard access != .open, access != .login else { return nil }
        let holder = try authenticate(credentials)
        if access == .admin, holder.client.role != .admin {
            throw KeychainError.missingEntitlement("this route needs an admin client")
        }
        return holder
    }

    /// `admit` for the credentials `request`'s headers carry (errSecParam when they conflict).
    public func admit(_ request: HTTPRequest, to access: RouteAccess) throws -> TokenHolder? {
        try admit(Credentials(request), to: access)
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
    /// No `Authorization` header and no (or an empty) `X-Vault-Token`.
    case missing
    /// An `Authorization` header that is not `Bearer <token>`, and no `X-Vault-Token`.
    case malformed
    /// A token no client holds: never issued, revoked, or expired long enough ago to be purged.
    case unknown
    /// A token past its `expiresAt` (refused so for an hour, then purged and unknown).
    case expired

    public var error: KeychainError {
        switch self {
        case .missing: KeychainError.authFailed("missing token: send Authorization: Bearer <token> (or X-Vault-Token)")
        case .malformed: KeychainError.authFailed("the Authorization header must be \"Bearer <token>\"")
        case .unknown: KeychainError.authFailed("unknown or revoked token")
        case .expired: KeychainError.authFailed("token expired")
        }
    }
}

/// Which header carried the caller's token: the self-service routes answer errors in the shape of
/// the tools that send it (`RouteSurface.vaultForVaultToken`).
public enum TokenHeader: Sendable {
    case authorization
    case vaultToken
}

/// What a request's headers say about its caller, found in one pass over them: the token
/// (`Authorization: Bearer`, or Vault's `X-Vault-Token`) and the header it came in. Vault's
/// `X-Vault-Request` is ignored; an `X-Vault-Namespace` other than the root namespace is refused.
public struct Credentials: Sendable {
    /// The presented token, a slice of its header's value; nil when none was (well) presented.
    public let token: Substring?
    /// The header the token came in; with no `token`, `.authorization` when that header was not
    /// `Bearer <token>` (malformed), nil when there was none (missing).
    public let header: TokenHeader?

    /// errSecParam when the request names a namespace (keychaind has none) or presents two
    /// different tokens; the message never echoes one.
    public init(_ request: HTTPRequest) throws(KeychainError) {
        var authorization: String?
        var vaultToken: String?
        var namespace: String?
        // On every request: names are compared only when their length fits, values are not copied.
        for header in request.headers {
            let length = header.name.utf8.count
            guard length == 13 || length == 17 else { continue }
            switch header.name {
            case "authorization": if authorization == nil { authorization = header.value }
            case "x-vault-token": if vaultToken == nil { vaultToken = header.value }
            case "x-vault-namespace": if namespace == nil { namespace = header.value }
            default: continue
            }
        }
        if let namespace, !namespace.isEmpty, namespace != "root", namespace != "/" {
            throw KeychainError.param("namespaces are not supported")
        }
        let bearer = authorization.flatMap(Authenticator.bearerToken)
        // An empty X-Vault-Token is none, as Vault reads it; a non-Bearer Authorization beside
        // one (a proxy's Basic credentials) is not keychaind's.
        if let vaultToken, !vaultToken.isEmpty {
            if let bearer, !bearer.utf8.elementsEqual(vaultToken.utf8) {
                throw KeychainError.param("Authorization: Bearer and X-Vault-Token carry different tokens; send one")
            }
            token = vaultToken[...]
            header = .vaultToken
        } else {
            token = bearer
            header = authorization == nil ? nil : .authorization
        }
    }
}
