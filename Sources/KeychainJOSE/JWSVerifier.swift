internal import COpenSSL

/// Checks a compact JWS's signature against a login role's keys and allowed algorithms.
public enum JWSVerifier {
    /// Accepts `jws` when its `alg` is one of `allowed` and a key that fits that algorithm
    /// (`VerificationKey.fits`) verifies its signature. Without a `kid` every key is a candidate.
    /// With one, the keys carrying that `kid` are, and so are keys carrying none (a PEM key, a JWK
    /// without `kid`: the header's `kid` picks among named keys, it cannot rule out an unnamed
    /// one the role trusts); no candidate at all is `.unknownKeyID`, on which the caller may
    /// refetch the issuer's keys (they rotate).
    public static func verify(
        _ jws: CompactJWS, keys: [VerificationKey], allowed: Set<JWSAlgorithm>
    ) throws(JWTRefusal) {
        // By bytes: `String ==` compares by Unicode canonical equivalence.
        guard
            let algorithm = JWSAlgorithm.allCases.first(where: { $0.rawValue.utf8.elementsEqual(jws.algorithm.utf8) }),
            allowed.contains(algorithm)
        else { throw .algorithm }
        var candidates = keys
        if let keyID = jws.keyID {
            candidates = keys.filter { $0.keyID?.utf8.elementsEqual(keyID.utf8) ?? true }
            guard !candidates.isEmpty else { throw .unknownKeyID }
        }
        for key in candidates where key.fits(algorithm) {
            if verifies(jws.signature, of: jws.signingInput, algorithm, key) { return }
        }
        throw .signature
    }

    /// Whether `signature` is `key`'s signature by `algorithm` of `input`.
    static func verifies(_ signature: [UInt8], of input: [UInt8], _ algorithm: JWSAlgorithm, _ key: VerificationKey)
        -> Bool
    {
        defer { ERR_clear_error() }
        let opensslSignature: [UInt8]
        switch key.kind {
        case .rsa(let bits):
            // RFC 7518 §3.3: the signature is exactly as long as the modulus.
            guard signature.count == (bits + 7) / 8 else { return false }
            opensslSignature = signature
        case .p256, .p384:
            guard let der = derECDSASignature(signature, coordinateLength: key.kind == .p256 ? 32 : 48) else {
                return false
            }
            opensslSignature = der
        case .ed25519:
            opensslSignature = signature
        }
        guard let messageContext = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(messageContext) }
        var context: OpaquePointer?
        let initialised: Int32
        if let digest = algorithm.digestName {
            initialised = EVP_DigestVerifyInit_ex(messageContext, &context, cString(digest), nil, nil, key.handle, nil)
        } else {
            initialised = EVP_DigestVerifyInit_ex(messageContext, &context, nil, nil, nil, key.handle, nil)
        }
        guard initialised == 1, let context else { return false }
        switch algorithm {
        case .ps256, .ps384, .ps512:
            // RFC 7518 §3.5: MGF1 with the signature's hash, a salt as long as that hash.
            guard EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING) == 1,
                EVP_PKEY_CTX_set_rsa_mgf1_md_name(context, cString(algorithm.digestName!), nil) == 1,
                EVP_PKEY_CTX_set_rsa_pss_saltlen(context, algorithm.digestLength) == 1
            else { return false }
        case .rs256, .rs384, .rs512:
            guard EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1 else { return false }
        case .es256, .es384, .edDSA:
            break
        }
        return EVP_DigestVerify(messageContext, opensslSignature, opensslSignature.count, input, input.count) == 1
    }

    /// A JWS ECDSA signature (RFC 7518 §3.4: `R || S`, each as long as the curve's field) as the
    /// DER `ECDSA-Sig-Value` OpenSSL verifies; nil for any other length.
    static func derECDSASignature(_ signature: [UInt8], coordinateLength: Int) -> [UInt8]? {
        guard signature.count == 2 * coordinateLength, let value = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(value) }
        guard let r = BN_bin2bn(signature, Int32(coordinateLength), nil) else { return nil }
        guard
            let s = signature.withUnsafeBufferPointer({
                BN_bin2bn($0.baseAddress! + coordinateLength, Int32(coordinateLength), nil)
            })
        else {
            BN_free(r)
            return nil
        }
        // set0 takes ownership of both numbers.
        guard ECDSA_SIG_set0(value, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(value, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(value, &cursor)
        }
        return written == length ? der : nil
    }

    /// A C string with static storage.
    private static func cString(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
