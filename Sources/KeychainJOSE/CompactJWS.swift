public import KeychainAPI
import KeychainCore

/// A JWT as a compact JWS (RFC 7515 §7.1): `header.payload.signature`, each unpadded base64url,
/// the header and payload JSON objects. Parsing refuses what keychaind does not verify rather
/// than ignoring it: JWE (five segments), the JSON serialization, `crit` (no extension is
/// understood) and `b64` (RFC 7797 unencoded payloads). The header's key-carrying members
/// (`jku`, `jwk`, `x5u`, `x5c`) are never read: keys come from the role's configuration only.
public struct CompactJWS: Sendable {
    /// Longer tokens are refused before any decoding (the login body is bounded at 16 KiB too).
    public static let maximumLength = 16 * 1024
    /// Longer `kid`s are refused: a key ID is a name, not a place for data.
    public static let maximumKeyIDLength = 256

    /// The header's `alg` as written; `JWSVerifier` decides whether it is an algorithm we verify.
    public let algorithm: String
    /// The header's `kid`.
    public let keyID: String?
    /// The header's `typ` (not checked here: issuers write `JWT`, `at+jwt` or nothing).
    public let type: String?
    /// The payload, a JSON object: the claims `JWTClaimsPolicy` checks.
    public let claims: JSONValue

    /// `BASE64URL(header) || '.' || BASE64URL(payload)`, the bytes the signature covers.
    let signingInput: [UInt8]
    let signature: [UInt8]

    /// How the payload is read: as JWT claims, or (for the RFC examples whose payloads are text)
    /// not at all, `claims` then an empty object.
    enum Payload { case claims, opaque }

    /// Parses `token`; `.malformed` for anything but a compact JWS with a JSON object payload.
    public init(parsing token: String) throws(JWTRefusal) {
        try self.init(parsing: token, payload: .claims)
    }

    init(parsing token: String, payload form: Payload) throws(JWTRefusal) {
        let bytes = Array(token.utf8)
        guard bytes.count <= Self.maximumLength, bytes.first != UInt8(ascii: "{") else { throw .malformed }
        let segments = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count == 3,
            let headerBytes = Self.decode(segments[0]),
            let payloadBytes = Self.decode(segments[1]),
            let signature = Self.decode(segments[2]), !signature.isEmpty,
            case .object(let header)? = try? JSONValue.parse(headerBytes)
        else { throw .malformed }
        func member(_ name: String) -> JSONValue? { header.first { $0.0.utf8.elementsEqual(name.utf8) }?.1 }
        guard member("crit") == nil, member("b64") == nil, case .string(let algorithm)? = member("alg") else {
            throw .malformed
        }
        var keyID: String?
        switch member("kid") {
        case nil: break
        case .string(let kid) where kid.utf8.count <= Self.maximumKeyIDLength: keyID = kid
        default: throw .malformed
        }
        var type: String?
        switch member("typ") {
        case nil: break
        case .string(let typ): type = typ
        default: throw .malformed
        }
        switch form {
        case .claims:
            guard let parsed = try? JSONValue.parse(payloadBytes), case .object = parsed else { throw .malformed }
            claims = parsed
        case .opaque:
            claims = .object([])
        }
        self.algorithm = algorithm
        self.keyID = keyID
        self.type = type
        self.signingInput = Array(bytes[..<(segments[0].count + 1 + segments[1].count)])
        self.signature = signature
    }

    /// A segment's bytes; nil unless it is unpadded base64url (`Base64URL.decode` is strict).
    private static func decode(_ segment: ArraySlice<UInt8>) -> [UInt8]? {
        guard let text = String(validating: segment, as: UTF8.self) else { return nil }
        return Base64URL.decode(text)
    }
}
