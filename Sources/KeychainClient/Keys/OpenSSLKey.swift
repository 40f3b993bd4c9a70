internal import COpenSSL
import KeychainCore

/// An RSA or elliptic-curve (P-256, P-384, P-521) key held by OpenSSL: the one owner of its
/// `EVP_PKEY`, freed in `deinit`. Freeing it is where private material is wiped: OpenSSL clears
/// the private components (`BN_clear_free` of RSA's d, p, q, ... and of the EC scalar) before
/// releasing them. Byte buffers this type fills with private material are the caller's to wipe.
///
/// Formats are Apple's (SecKeyCopyExternalRepresentation): RSA as PKCS #1 (`RSAPrivateKey`,
/// `RSAPublicKey` DER), EC as ANSI X9.63 (`04 || X || Y`, then `|| K` for a private key).
/// @unchecked Sendable: the key is never changed after creation, and OpenSSL allows concurrent
/// operations on one `EVP_PKEY` (each makes its own operation context).
final class OpenSSLKey: @unchecked Sendable {
    enum Family: Equatable { case rsa, ec }

    let handle: OpaquePointer
    let family: Family
    let isPrivate: Bool

    private init(handle: OpaquePointer, family: Family, isPrivate: Bool) {
        self.handle = handle
        self.family = family
        self.isPrivate = isPrivate
    }

    deinit { EVP_PKEY_free(handle) }

    /// The key size (RSA: modulus bits; EC: the curve's bits).
    var sizeInBits: Int { Int(EVP_PKEY_get_bits(handle)) }

    /// The RSA sizes and EC curves keychaind makes and imports.
    static func isSupported(_ family: Family, bits: Int) -> Bool {
        switch family {
        case .rsa: [1024, 2048, 3072, 4096].contains(bits)
        case .ec: curveName(bits: bits) != nil
        }
    }

    private static func curveName(bits: Int) -> String? {
        switch bits {
        case 256: "P-256"
        case 384: "P-384"
        case 521: "P-521"
        default: nil
        }
    }

    // MARK: Making keys

    /// A new private key.
    static func generate(_ family: Family, bits: Int) throws -> OpenSSLKey {
        guard isSupported(family, bits: bits) else { throw KeychainError.param("unsupported key size \(bits)") }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, family == .rsa ? "RSA" : "EC", nil) else {
            throw KeychainError(.allocate)
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw KeychainError.param("key generation failed") }
        let configured =
            switch family {
            case .rsa: EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits))
            case .ec: EVP_PKEY_CTX_set_group_name(context, curveName(bits: bits)!)
            }
        var key: OpaquePointer?
        guard configured == 1, EVP_PKEY_generate(context, &key) == 1, let key else {
            throw KeychainError.param("key generation failed")
        }
        return OpenSSLKey(handle: key, family: family, isPrivate: true)
    }

    /// A key from Apple's external representation; errSecParam when the bytes are not one.
    static func importing(_ bytes: [UInt8], family: Family, isPrivate: Bool) throws -> OpenSSLKey {
        let key: OpenSSLKey? =
            switch family {
            case .rsa: importRSA(bytes, isPrivate: isPrivate)
            case .ec: importEC(bytes, isPrivate: isPrivate)
            }
        guard let key, isSupported(family, bits: key.sizeInBits) else {
            throw KeychainError.param(
                "\(family == .rsa ? "RSA" : "EC") \(isPrivate ? "private" : "public") key creation from data failed")
        }
        return key
    }

    /// PKCS #1 DER, the whole input and nothing more.
    private static func importRSA(_ bytes: [UInt8], isPrivate: Bool) -> OpenSSLKey? {
        bytes.withUnsafeBufferPointer { buffer -> OpenSSLKey? in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            let handle =
                isPrivate
                ? d2i_PrivateKey(EVP_PKEY_RSA, nil, &cursor, buffer.count)
                : d2i_PublicKey(EVP_PKEY_RSA, nil, &cursor, buffer.count)
            guard let handle else { return nil }
            let key = OpenSSLKey(handle: handle, family: .rsa, isPrivate: isPrivate)
            guard cursor == base + buffer.count, EVP_PKEY_get_base_id(handle) == EVP_PKEY_RSA else { return nil }
            return key
        }
    }

    /// X9.63: `04 || X || Y [|| K]`, each coordinate as long as the curve's field; the point must be
    /// on the curve and a private scalar must match it.
    private static func importEC(_ bytes: [UInt8], isPrivate: Bool) -> OpenSSLKey? {
        let parts = isPrivate ? 3 : 2
        guard bytes.first == 4, (bytes.count - 1) % parts == 0 else { return nil }
        let fieldLength = (bytes.count - 1) / parts
        let bits = fieldLength == 66 ? 521 : fieldLength * 8
        guard let curve = curveName(bits: bits), let builder = OSSL_PARAM_BLD_new() else { return nil }
        defer { OSSL_PARAM_BLD_free(builder) }
        let pointLength = 1 + 2 * fieldLength
        var scalar: OpaquePointer?
        defer { BN_clear_free(scalar) }
        // The builder keeps the pointers it is given until `to_param` copies what they point to
        // (and the parameters keep pointing at their names), so the names are static strings and
        // the parameters are made while the curve's name and the bytes stay in place.
        let made = curve.withCString { curve in
            bytes.withUnsafeBufferPointer { buffer -> UnsafeMutablePointer<OSSL_PARAM>? in
                guard OSSL_PARAM_BLD_push_utf8_string(builder, Self.parameterName("group"), curve, 0) == 1,
                    OSSL_PARAM_BLD_push_octet_string(builder, Self.parameterName("pub"), buffer.baseAddress, pointLength) == 1
                else { return nil }
                if isPrivate {
                    // A "secure" number: the builder then puts it in the block OSSL_PARAM_free clears.
                    scalar = BN_secure_new()
                    guard scalar != nil, BN_bin2bn(buffer.baseAddress! + pointLength, Int32(fieldLength), scalar) != nil,
                        OSSL_PARAM_BLD_push_BN(builder, Self.parameterName("priv"), scalar) == 1
                    else { return nil }
                }
                return OSSL_PARAM_BLD_to_param(builder)
            }
        }
        guard let parameters = made else { return nil }
        defer { OSSL_PARAM_free(parameters) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var handle: OpaquePointer?
        let selection = isPrivate ? COpenSSL_selection_keypair() : COpenSSL_selection_public_key()
        guard EVP_PKEY_fromdata_init(context) == 1, EVP_PKEY_fromdata(context, &handle, selection, parameters) == 1,
            let handle
        else { return nil }
        let key = OpenSSLKey(handle: handle, family: .ec, isPrivate: isPrivate)
        guard let check = EVP_PKEY_CTX_new_from_pkey(nil, handle, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(check) }
        return (isPrivate ? EVP_PKEY_pairwise_check(check) : EVP_PKEY_public_check(check)) == 1 ? key : nil
    }

    /// A parameter name (`OSSL_PKEY_PARAM_*`) with static storage, as parameters point at their names.
    private static func parameterName(_ name: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// The public half (a public key is its own).
    func publicKey() throws -> OpenSSLKey {
        guard isPrivate else { return self }
        return try Self.importing(publicBytes(), family: family, isPrivate: false)
    }

    // MARK: Bytes

    /// Apple's external representation; for a private key the caller wipes it after use.
    func externalRepresentation() throws -> [UInt8] {
        guard isPrivate else { return try publicBytes() }
        switch family {
        case .rsa:
            return try encoded { i2d_PrivateKey(handle, $0) }
        case .ec:
            var bytes = try publicBytes()
            let fieldLength = (sizeInBits + 7) / 8
            var scalar: OpaquePointer?
            defer { BN_clear_free(scalar) }
            guard EVP_PKEY_get_bn_param(handle, OSSL_PKEY_PARAM_PRIV_KEY, &scalar) == 1 else {
                throw KeychainError.param("the private key cannot be exported")
            }
            let start = bytes.count
            bytes.append(contentsOf: repeatElement(0, count: fieldLength))
            let written = bytes.withUnsafeMutableBufferPointer {
                BN_bn2binpad(scalar, $0.baseAddress! + start, Int32(fieldLength))
            }
            guard written == fieldLength else {
                SecretBytes.wipe(&bytes)
                throw KeychainError.param("the private key cannot be exported")
            }
            return bytes
        }
    }

    /// The public key's bytes: PKCS #1 `RSAPublicKey`, or the uncompressed EC point.
    func publicBytes() throws -> [UInt8] {
        switch family {
        case .rsa:
            return try encoded { i2d_PublicKey(handle, $0) }
        case .ec:
            var length = 0
            guard EVP_PKEY_get_octet_string_param(handle, OSSL_PKEY_PARAM_PUB_KEY, nil, 0, &length) == 1 else {
                throw KeychainError.param("the public key cannot be exported")
            }
            var point = [UInt8](repeating: 0, count: length)
            guard EVP_PKEY_get_octet_string_param(handle, OSSL_PKEY_PARAM_PUB_KEY, &point, length, &length) == 1,
                point.first == 4
            else { throw KeychainError.param("the public key cannot be exported") }
            return Array(point.prefix(length))
        }
    }

    /// An i2d encoding: asked for its length first, then written into an array of that length.
    private func encoded(_ i2d: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) throws -> [UInt8] {
        let length = Int(i2d(nil))
        guard length > 0 else { throw KeychainError.param("the key cannot be exported") }
        var bytes = [UInt8](repeating: 0, count: length)
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d(&cursor)
        }
        guard Int(written) == length else {
            SecretBytes.wipe(&bytes)
            throw KeychainError.param("the key cannot be exported")
        }
        return bytes
    }

    /// SHA-1, for a public key's hash (`applicationLabel`).
    static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        let done = bytes.withUnsafeBufferPointer { EVP_Digest($0.baseAddress, $0.count, &digest, &length, EVP_sha1(), nil) }
        precondition(done == 1 && length == 20, "SHA-1 failed")
        return digest
    }
}
