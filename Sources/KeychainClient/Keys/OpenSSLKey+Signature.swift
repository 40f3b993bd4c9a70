internal import COpenSSL
import KeychainCore

extension OpenSSLKey {
    /// Signs `input` (the message, or its digest for a digest scheme) with this private key.
    func sign(_ input: [UInt8], _ scheme: SignatureScheme) throws -> [UInt8] {
        let digest = scheme.hash.evpDigest
        if scheme.signsDigest {
            guard input.count == Int(EVP_MD_get_size(digest)) else {
                throw KeychainError.param("the digest must be \(EVP_MD_get_size(digest)) bytes")
            }
            let context = try keyContext { EVP_PKEY_sign_init($0) == 1 }
            defer { EVP_PKEY_CTX_free(context) }
            try Self.configure(context, scheme, digest: digest, setDigest: true)
            return try Self.signature { EVP_PKEY_sign(context, $0, $1, input, input.count) }
        }
        guard let messageContext = EVP_MD_CTX_new() else { throw KeychainError(.allocate) }
        defer { EVP_MD_CTX_free(messageContext) }
        var context: OpaquePointer?
        guard EVP_DigestSignInit(messageContext, &context, digest, nil, handle) == 1, let context else {
            throw KeychainError.param("signing failed")
        }
        try Self.configure(context, scheme, digest: digest, setDigest: false)
        return try Self.signature { EVP_DigestSign(messageContext, $0, $1, input, input.count) }
    }

    /// Whether `signature` is this public key's signature of `input`.
    func verify(_ signature: [UInt8], of input: [UInt8], _ scheme: SignatureScheme) throws -> Bool {
        let digest = scheme.hash.evpDigest
        if scheme.signsDigest {
            guard input.count == Int(EVP_MD_get_size(digest)) else {
                throw KeychainError.param("the digest must be \(EVP_MD_get_size(digest)) bytes")
            }
            let context = try keyContext { EVP_PKEY_verify_init($0) == 1 }
            defer { EVP_PKEY_CTX_free(context) }
            try Self.configure(context, scheme, digest: digest, setDigest: true)
            return EVP_PKEY_verify(context, signature, signature.count, input, input.count) == 1
        }
        guard let messageContext = EVP_MD_CTX_new() else { throw KeychainError(.allocate) }
        defer { EVP_MD_CTX_free(messageContext) }
        var context: OpaquePointer?
        guard EVP_DigestVerifyInit(messageContext, &context, digest, nil, handle) == 1, let context else {
            throw KeychainError.param("verification failed")
        }
        try Self.configure(context, scheme, digest: digest, setDigest: false)
        return EVP_DigestVerify(messageContext, signature, signature.count, input, input.count) == 1
    }

    /// A new operation context on this key, initialised by `initialise`; the caller frees it.
    private func keyContext(_ initialise: (OpaquePointer) -> Bool) throws -> OpaquePointer {
        guard let context = EVP_PKEY_CTX_new(handle, nil) else { throw KeychainError(.allocate) }
        guard initialise(context) else {
            EVP_PKEY_CTX_free(context)
            throw KeychainError.param("the key cannot do this operation")
        }
        return context
    }

    /// The padding (PSS: MGF1 with the signature's hash, a salt as long as the hash, as Apple's).
    private static func configure(
        _ context: OpaquePointer, _ scheme: SignatureScheme, digest: OpaquePointer, setDigest: Bool
    ) throws {
        var done = !setDigest || EVP_PKEY_CTX_set_signature_md(context, digest) == 1
        switch scheme.padding {
        case .pkcs1v15:
            done = done && EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1
        case .pss:
            done = done && EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING) == 1
                && EVP_PKEY_CTX_set_rsa_pss_saltlen(context, RSA_PSS_SALTLEN_DIGEST) == 1
                && EVP_PKEY_CTX_set_rsa_mgf1_md(context, digest) == 1
        case .ecdsa:
            break
        }
        guard done else { throw KeychainError.param("the algorithm cannot be set up") }
    }

    /// A signature of unknown length: asked for its largest length, then written (ECDSA's DER is shorter at times).
    private static func signature(_ sign: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int>) -> Int32) throws
        -> [UInt8]
    {
        var length = 0
        guard sign(nil, &length) == 1, length > 0 else { throw KeychainError.param("signing failed") }
        var signature = [UInt8](repeating: 0, count: length)
        guard sign(&signature, &length) == 1 else { throw KeychainError.param("signing failed") }
        return Array(signature.prefix(length))
    }
}

extension SignatureScheme.Hash {
    /// OpenSSL's digest (static tables, never freed).
    var evpDigest: OpaquePointer {
        switch self {
        case .sha1: EVP_sha1()
        case .sha224: EVP_sha224()
        case .sha256: EVP_sha256()
        case .sha384: EVP_sha384()
        case .sha512: EVP_sha512()
        }
    }
}
