internal import COpenSSL
import KeychainAPI
import KeychainCore

/// A JWK set (RFC 7517 §5), as an OpenID Connect issuer publishes at its `jwks_uri`.
public enum JWKSet {
    /// The verification keys of a JWK set document `{"keys":[...]}`.
    ///
    /// Keys keychaind does not verify with (other `kty`s, curves other than P-256, P-384 and
    /// Ed25519) are skipped: real issuers publish mixed sets. A key of a type we read whose
    /// members are wrong (missing, not base64url, a point off its curve) refuses the whole set,
    /// so that the caller keeps the set it had rather than a part of a broken one. Private
    /// members (`d`, `p`, ...) are never read: a key that carries them is used by its public part.
    public static func parse(_ bytes: [UInt8]) throws(KeyImportError) -> [VerificationKey] {
        guard let document = try? JSONValue.parse(bytes), case .array(let members)? = document["keys"] else {
            throw KeyImportError("not a JWK set: a JSON object with a \"keys\" array")
        }
        var keys: [VerificationKey] = []
        for (index, member) in members.enumerated() {
            do throws(KeyImportError) {
                if let key = try JWK(member).verificationKey() { keys.append(key) }
            } catch {
                throw KeyImportError("key \(index): \(error.description)")
            }
        }
        return keys
    }
}

/// One JWK's members, read for what they say about verification.
private struct JWK {
    let members: JSONValue
    let keyType: String
    let keyID: String?
    let algorithm: String?
    let use: String?

    init(_ value: JSONValue) throws(KeyImportError) {
        guard case .object = value else { throw KeyImportError("not a JSON object") }
        members = value
        guard case .string(let keyType)? = value["kty"] else { throw KeyImportError("no \"kty\" string") }
        self.keyType = keyType
        func optionalString(_ name: String) throws(KeyImportError) -> String? {
            switch value[name] {
            case nil: return nil
            case .string(let string): return string
            default: throw KeyImportError("\"\(name)\" is not a string")
            }
        }
        keyID = try optionalString("kid")
        algorithm = try optionalString("alg")
        use = try optionalString("use")
    }

    /// The key, or nil for a type or curve keychaind does not verify with.
    func verificationKey() throws(KeyImportError) -> VerificationKey? {
        let made: (handle: OpaquePointer, kind: VerificationKey.Kind)?
        switch keyType {
        case "RSA":
            made = try rsaKey()
        case "EC":
            guard case .string(let curve)? = members["crv"] else { throw KeyImportError("no \"crv\" string") }
            switch curve {
            case "P-256": made = try ecKey(curve: "P-256", kind: .p256, coordinateLength: 32)
            case "P-384": made = try ecKey(curve: "P-384", kind: .p384, coordinateLength: 48)
            default: return nil
            }
        case "OKP":
            guard case .string(let curve)? = members["crv"] else { throw KeyImportError("no \"crv\" string") }
            guard curve == "Ed25519" else { return nil }
            made = try ed25519Key()
        default:
            return nil
        }
        guard let made else { throw KeyImportError("OpenSSL refused the \(keyType) key") }
        let key = VerificationKey(handle: made.handle, kind: made.kind, keyID: keyID, algorithm: algorithm, use: use)
        guard key.passesPublicCheck() else { throw KeyImportError("an invalid \(keyType) public key") }
        return key
    }

    /// The bytes of member `name`, base64url, of `length` bytes when given.
    private func bytes(_ name: String, length: Int? = nil) throws(KeyImportError) -> [UInt8] {
        guard case .string(let text)? = members[name], let bytes = Base64URL.decode(text), !bytes.isEmpty else {
            throw KeyImportError("\"\(name)\" is not base64url")
        }
        if let length, bytes.count != length { throw KeyImportError("\"\(name)\" is not \(length) bytes") }
        return bytes
    }

    /// RFC 7518 §6.3.1: the modulus `n` and exponent `e`, big-endian unsigned.
    private func rsaKey() throws(KeyImportError) -> (handle: OpaquePointer, kind: VerificationKey.Kind)? {
        let modulus = try bytes("n")
        let exponent = try bytes("e")
        guard let builder = OSSL_PARAM_BLD_new() else { return nil }
        defer { OSSL_PARAM_BLD_free(builder) }
        let n = BN_bin2bn(modulus, Int32(modulus.count), nil)
        let e = BN_bin2bn(exponent, Int32(exponent.count), nil)
        defer {
            BN_free(n)
            BN_free(e)
        }
        // The builder reads the numbers when `to_param` runs, so they live until then.
        guard let n, let e, OSSL_PARAM_BLD_push_BN(builder, parameterName("n"), n) == 1,
            OSSL_PARAM_BLD_push_BN(builder, parameterName("e"), e) == 1,
            let handle = publicKey(type: "RSA", builder: builder)
        else { return nil }
        return (handle, .rsa(bits: Int(EVP_PKEY_get_bits(handle))))
    }

    /// RFC 7518 §6.2.1: the curve and the point's coordinates `x` and `y`, each as long as the
    /// curve's field; given to OpenSSL as the uncompressed point `04 || x || y`.
    private func ecKey(curve: StaticString, kind: VerificationKey.Kind, coordinateLength: Int) throws(KeyImportError)
        -> (handle: OpaquePointer, kind: VerificationKey.Kind)?
    {
        let point = [4] + (try bytes("x", length: coordinateLength)) + (try bytes("y", length: coordinateLength))
        guard let builder = OSSL_PARAM_BLD_new() else { return nil }
        defer { OSSL_PARAM_BLD_free(builder) }
        // The builder keeps the point's pointer until `to_param` copies it, so both run while
        // the point stays in place.
        let handle = point.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            guard OSSL_PARAM_BLD_push_utf8_string(builder, parameterName("group"), parameterName(curve), 0) == 1,
                OSSL_PARAM_BLD_push_octet_string(builder, parameterName("pub"), buffer.baseAddress, buffer.count) == 1
            else { return nil }
            return publicKey(type: "EC", builder: builder)
        }
        guard let handle else { return nil }
        return (handle, kind)
    }

    /// RFC 8037 §2: the 32-byte public key `x`.
    private func ed25519Key() throws(KeyImportError) -> (handle: OpaquePointer, kind: VerificationKey.Kind)? {
        let raw = try bytes("x", length: 32)
        guard let handle = EVP_PKEY_new_raw_public_key_ex(nil, "ED25519", nil, raw, raw.count) else { return nil }
        return (handle, .ed25519)
    }

    /// A public key of `type` from the builder's parameters (EVP_PKEY_fromdata).
    private func publicKey(type: String, builder: OpaquePointer) -> OpaquePointer? {
        defer { ERR_clear_error() }
        guard let parameters = OSSL_PARAM_BLD_to_param(builder) else { return nil }
        defer { OSSL_PARAM_free(parameters) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var handle: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
            EVP_PKEY_fromdata(context, &handle, COpenSSL_selection_public_key(), parameters) == 1
        else { return nil }
        return handle
    }

    /// A C string with static storage, as parameters point at their names (and the curve's).
    private func parameterName(_ name: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
