/// Why a JWT presented at login was refused. `detail` names the check that failed and never
/// quotes the token, a key or a claim's value: it goes into the answer and the audit line.
public enum JWTRefusal: Error, Sendable, Equatable {
    /// Not a compact JWS keychaind reads (segments, base64url, header or payload JSON).
    case malformed
    /// The header's `alg` is not one of the role's allowed algorithms.
    case algorithm
    /// The header names a `kid` that no key of the set carries: the caller may refetch the
    /// issuer's JWKS once (keys rotate) before refusing.
    case unknownKeyID
    /// No key that fits the algorithm verifies the signature.
    case signature
    case issuer
    case audience
    /// `exp` passed, missing or not a number.
    case expired
    /// `nbf` or `iat` in the future.
    case notYetValid
    case subject
    /// A bound claim, by the name the role configures, missing or not matching.
    case claim(String)

    public var detail: String {
        switch self {
        case .malformed: "malformed token"
        case .algorithm: "algorithm"
        case .unknownKeyID, .signature: "signature"
        case .issuer: "issuer"
        case .audience: "audience"
        case .expired: "expired"
        case .notYetValid: "not yet valid"
        case .subject: "subject"
        case .claim(let name): "claim \(name)"
        }
    }
}
