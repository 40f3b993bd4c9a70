/// The JWS algorithms (RFC 7518 §3, RFC 8037 §3.1) keychaind verifies. Not here, so never
/// verified: `none`, the HMAC algorithms (a login role holds no shared secret, and an HS256
/// token keyed with a public key is the classic confusion), ES512 and everything else.
public enum JWSAlgorithm: String, Sendable, Hashable, CaseIterable {
    case rs256 = "RS256"
    case rs384 = "RS384"
    case rs512 = "RS512"
    case ps256 = "PS256"
    case ps384 = "PS384"
    case ps512 = "PS512"
    case es256 = "ES256"
    case es384 = "ES384"
    case edDSA = "EdDSA"

    /// The OpenSSL digest name the signature is made over; nil for EdDSA, which hashes itself.
    var digestName: StaticString? {
        switch self {
        case .rs256, .ps256, .es256: "SHA256"
        case .rs384, .ps384, .es384: "SHA384"
        case .rs512, .ps512: "SHA512"
        case .edDSA: nil
        }
    }

    /// The digest's length in bytes: the PSS salt length (RFC 7518 §3.5).
    var digestLength: Int32 {
        switch self {
        case .rs256, .ps256, .es256: 32
        case .rs384, .ps384, .es384: 48
        case .rs512, .ps512: 64
        case .edDSA: 0
        }
    }
}
