internal import COpenSSL

/// A public key a login role trusts, held by OpenSSL: the one owner of its `EVP_PKEY`, freed in
/// `deinit`. Made from a JWK set (`JWKSet.parse`) or a PEM public key (`parsePEM`); the JWK's
/// `kid`, `alg` and `use` travel with it, as they decide which tokens it may verify.
/// @unchecked Sendable: the key never changes after creation, and OpenSSL allows concurrent
/// operations on one `EVP_PKEY` (each makes its own operation context).
public final class VerificationKey: @unchecked Sendable {
    /// The key types keychaind verifies with.
    public enum Kind: Sendable, Equatable {
        case rsa(bits: Int)
        case p256, p384
        case ed25519
    }

    public let kind: Kind
    /// The JWK's `kid`, `alg` and `use` (nil for a PEM key, and when the JWK has none).
    public let keyID: String?
    public let algorithm: String?
    public let use: String?

    let handle: OpaquePointer

    init(handle: OpaquePointer, kind: Kind, keyID: String?, algorithm: String?, use: String?) {
        self.handle = handle
        self.kind = kind
        self.keyID = keyID
        self.algorithm = algorithm
        self.use = use
    }

    deinit { EVP_PKEY_free(handle) }

    /// RSA keys shorter than this verify nothing (RFC 7518 §3.3 and §3.5).
    public static let minimumRSABits = 2048

    /// Whether this key may verify a signature by `algorithm`: its type and size (curve) are the
    /// algorithm's, and the JWK's `alg` and `use`, when present, allow it. Keys that do not fit
    /// are never tried, so no key serves an algorithm it was not made for.
    public func fits(_ algorithm: JWSAlgorithm) -> Bool {
        if let named = self.algorithm, !named.utf8.elementsEqual(algorithm.rawValue.utf8) { return false }
        if let use, !use.utf8.elementsEqual("sig".utf8) { return false }
        switch (algorithm, kind) {
        case (.rs256, .rsa(let bits)), (.rs384, .rsa(let bits)), (.rs512, .rsa(let bits)),
            (.ps256, .rsa(let bits)), (.ps384, .rsa(let bits)), (.ps512, .rsa(let bits)):
            return bits >= Self.minimumRSABits
        case (.es256, .p256), (.es384, .p384), (.edDSA, .ed25519):
            return true
        default:
            return false
        }
    }

    /// A `-----BEGIN PUBLIC KEY-----` (SubjectPublicKeyInfo) PEM block: RSA, EC P-256 or P-384,
    /// or Ed25519. Text around the block is ignored, as PEM readers do.
    public static func parsePEM(_ pem: String) throws(KeyImportError) -> VerificationKey {
        let read: OpaquePointer? = pem.utf8CString.withUnsafeBufferPointer { text in
            // The count without the terminating NUL; the BIO only reads the buffer.
            guard let bio = BIO_new_mem_buf(text.baseAddress, Int32(text.count - 1)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
        }
        ERR_clear_error()
        guard let handle = read else { throw KeyImportError("not a PEM public key") }
        guard let kind = kind(of: handle) else {
            EVP_PKEY_free(handle)
            throw KeyImportError("not an RSA, P-256, P-384 or Ed25519 public key")
        }
        let key = VerificationKey(handle: handle, kind: kind, keyID: nil, algorithm: nil, use: nil)
        guard key.passesPublicCheck() else { throw KeyImportError("an invalid public key") }
        return key
    }

    /// The kind of a key OpenSSL decoded; nil for other types and curves.
    static func kind(of handle: OpaquePointer) -> Kind? {
        if EVP_PKEY_is_a(handle, "RSA") == 1 { return .rsa(bits: Int(EVP_PKEY_get_bits(handle))) }
        if EVP_PKEY_is_a(handle, "ED25519") == 1 { return .ed25519 }
        guard EVP_PKEY_is_a(handle, "EC") == 1 else { return nil }
        var name = [CChar](repeating: 0, count: 32)
        var length = 0
        guard EVP_PKEY_get_utf8_string_param(handle, "group", &name, name.count, &length) == 1 else { return nil }
        // OpenSSL's names for the curves: P-256 is prime256v1 (X9.62), P-384 secp384r1 (SEC 2).
        switch String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) {
        case "prime256v1": return .p256
        case "secp384r1": return .p384
        default: return nil
        }
    }

    /// OpenSSL's checks of a public key (RSA: modulus and exponent sane; EC: the point on the curve).
    func passesPublicCheck() -> Bool {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, handle, nil) else { return false }
        defer { EVP_PKEY_CTX_free(context) }
        let passed = EVP_PKEY_public_check(context) == 1
        ERR_clear_error()
        return passed
    }
}

/// Why a key (a JWK set, a JWK in it, or a PEM block) was refused. `description` says what is
/// wrong and where, never quoting key material.
public struct KeyImportError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    init(_ description: String) { self.description = description }
}
