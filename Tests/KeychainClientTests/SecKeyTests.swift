import Foundation
import KeychainClient
import Testing

/// SecKey without a server: keys made, read and written in Apple's formats, and checked against
/// the openssl command line (another implementation), signatures for every algorithm, Apple's errors.
struct SecKeyTests {
    static let sizes: [(CFString, Int)] = [
        (kSecAttrKeyTypeRSA, 2048), (kSecAttrKeyTypeRSA, 3072), (kSecAttrKeyTypeECSECPrimeRandom, 256),
        (kSecAttrKeyTypeECSECPrimeRandom, 384), (kSecAttrKeyTypeECSECPrimeRandom, 521),
    ]

    static func makeKey(_ type: CFString, _ bits: Int) throws -> SecKey {
        let parameters: [String: Any] = [kSecAttrKeyType as String: type, kSecAttrKeySizeInBits as String: bits]
        var error: Unmanaged<CFError>?
        guard let key = SecKeyCreateRandomKey(parameters as CFDictionary, &error) else { throw error!.takeRetainedValue() }
        return key
    }

    @Test(arguments: sizes)
    func keysRoundTripThroughTheirExternalRepresentation(type: CFString, bits: Int) throws {
        let key = try Self.makeKey(type, bits)
        let privateBytes = try #require(SecKeyCopyExternalRepresentation(key, nil))
        let publicKey = try #require(SecKeyCopyPublicKey(key))
        let publicBytes = try #require(SecKeyCopyExternalRepresentation(publicKey, nil))
        if type == kSecAttrKeyTypeECSECPrimeRandom {
            // X9.63: 04 || X || Y, then || K.
            let field = (bits + 7) / 8
            #expect(publicBytes.count == 1 + 2 * field && publicBytes.first == 4)
            #expect(privateBytes.count == 1 + 3 * field && privateBytes.prefix(publicBytes.count) == publicBytes)
        }
        for (bytes, keyClass) in [(privateBytes, kSecAttrKeyClassPrivate), (publicBytes, kSecAttrKeyClassPublic)] {
            let options: [String: Any] = [kSecAttrKeyType as String: type, kSecAttrKeyClass as String: keyClass]
            let imported = try #require(SecKeyCreateWithData(bytes as CFData, options as CFDictionary, nil))
            #expect(SecKeyCopyExternalRepresentation(imported, nil) == bytes)
        }
        let attributes = try #require(SecKeyCopyAttributes(key) as? [String: Any])
        #expect(attributes[kSecAttrKeyType as String] as? String == type)
        #expect(attributes[kSecAttrKeyClass as String] as? String == kSecAttrKeyClassPrivate)
        #expect(attributes[kSecAttrKeySizeInBits as String] as? Int == bits)
        #expect(attributes[kSecValueData as String] as? Data == privateBytes)
        #expect(attributes[kSecAttrApplicationLabel as String] as? Data == OpenSSLTool.sha1(publicBytes))
        let publicAttributes = try #require(SecKeyCopyAttributes(publicKey) as? [String: Any])
        #expect(publicAttributes[kSecAttrKeyClass as String] as? String == kSecAttrKeyClassPublic)
        #expect(publicAttributes[kSecAttrApplicationLabel as String] as? Data == OpenSSLTool.sha1(publicBytes))
    }

    /// RSA: PKCS #1 as openssl writes it, both ways, and the same public key hash.
    @Test func rsaBytesAreOpenSSLsPKCS1() throws {
        let pem = try OpenSSLTool.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"])
        let pkcs1 = try OpenSSLTool.run(["rsa", "-traditional", "-outform", "DER"], input: pem)
        let publicPKCS1 = try OpenSSLTool.run(["rsa", "-RSAPublicKey_out", "-outform", "DER"], input: pem)
        let options: [String: Any] = [kSecAttrKeyType as String: kSecAttrKeyTypeRSA, kSecAttrKeyClass as String: kSecAttrKeyClassPrivate]
        let key = try #require(SecKeyCreateWithData(pkcs1 as CFData, options as CFDictionary, nil))
        #expect(SecKeyCopyExternalRepresentation(key, nil) == pkcs1)
        #expect(SecKeyCopyExternalRepresentation(try #require(SecKeyCopyPublicKey(key)), nil) == publicPKCS1)
        // A signature openssl verifies.
        let message = Data("signed by SecKey, checked by openssl".utf8)
        let signature = try #require(SecKeyCreateSignature(key, .rsaSignatureMessagePKCS1v15SHA256, message as CFData, nil))
        #expect(try OpenSSLTool.verifies(signature, of: message, publicKeyPEM: OpenSSLTool.run(["pkey", "-pubout"], input: pem)))
    }

    /// EC: the X9.63 bytes of a key openssl made (its `pub` and `priv` as printed), and a signature openssl verifies.
    @Test func ecBytesAreX963() throws {
        let pem = try OpenSSLTool.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"])
        let text = String(decoding: try OpenSSLTool.run(["pkey", "-text", "-noout"], input: pem), as: UTF8.self)
        let priv = OpenSSLTool.hexBlock(after: "priv:", in: text), pub = OpenSSLTool.hexBlock(after: "pub:", in: text)
        let scalar = Data(repeating: 0, count: 32 - priv.count) + priv.suffix(32)
        let options: [String: Any] = [kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeyClass as String: kSecAttrKeyClassPrivate]
        let key = try #require(SecKeyCreateWithData((pub + scalar) as CFData, options as CFDictionary, nil))
        #expect(SecKeyCopyExternalRepresentation(key, nil) == pub + scalar)
        let message = Data("signed by SecKey, checked by openssl".utf8)
        let signature = try #require(SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message as CFData, nil))
        #expect(try OpenSSLTool.verifies(signature, of: message, publicKeyPEM: OpenSSLTool.run(["pkey", "-pubout"], input: pem)))
        // A private scalar that does not belong to the point is refused.
        var wrong = pub + scalar
        wrong[wrong.count - 1] ^= 1
        var error: Unmanaged<CFError>?
        #expect(SecKeyCreateWithData(wrong as CFData, options as CFDictionary, &error) == nil)
        #expect(error?.takeRetainedValue().code == Int(errSecParam))
    }

    static let algorithms: [SecKeyAlgorithm] = ["PKCS1v15", "PSS"].flatMap { padding in
        ["SHA1", "SHA224", "SHA256", "SHA384", "SHA512"].flatMap { hash in
            ["message", "digest"].map { SecKeyAlgorithm(rawValue: "algid:sign:RSA:\($0)-\(padding):\(hash)") }
        }
    } + ["SHA1", "SHA224", "SHA256", "SHA384", "SHA512"].flatMap { hash in
        ["message", "digest"].map { SecKeyAlgorithm(rawValue: "algid:sign:ECDSA:\($0)-X962:\(hash)") }
    }

    /// One key of each family for the 30 algorithms (an RSA key takes a while to make).
    static let rsa = try! makeKey(kSecAttrKeyTypeRSA, 2048)
    static let ec = try! makeKey(kSecAttrKeyTypeECSECPrimeRandom, 256)

    @Test(arguments: algorithms)
    func signaturesVerifyWithThePublicKeyOnly(algorithm: SecKeyAlgorithm) throws {
        let isRSA = algorithm.rawValue.contains(":RSA:")
        let (key, other) = isRSA ? (Self.rsa, Self.ec) : (Self.ec, Self.rsa)
        let publicKey = try #require(SecKeyCopyPublicKey(key))
        #expect(SecKeyIsAlgorithmSupported(key, .sign, algorithm))
        #expect(SecKeyIsAlgorithmSupported(publicKey, .verify, algorithm))
        #expect(!SecKeyIsAlgorithmSupported(publicKey, .sign, algorithm))
        #expect(!SecKeyIsAlgorithmSupported(key, .verify, algorithm))
        #expect(!SecKeyIsAlgorithmSupported(other, .sign, algorithm))
        let hashLength = ["SHA1": 20, "SHA224": 28, "SHA256": 32, "SHA384": 48, "SHA512": 64][String(algorithm.rawValue.split(separator: ":").last!)]!
        let input = algorithm.rawValue.contains(":digest-") ? Data((0..<hashLength).map { UInt8($0) }) : Data("message".utf8)
        var error: Unmanaged<CFError>?
        let signature = try #require(SecKeyCreateSignature(key, algorithm, input as CFData, &error))
        #expect(SecKeyVerifySignature(publicKey, algorithm, input as CFData, signature as CFData, &error))
        // Another input: false, with errSecVerifyFailed.
        var changed = input
        changed[0] ^= 1
        #expect(!SecKeyVerifySignature(publicKey, algorithm, changed as CFData, signature as CFData, &error))
        #expect(error?.takeRetainedValue().code == Int(errSecVerifyFailed))
        // The wrong key for the algorithm: nil, errSecParam.
        #expect(SecKeyCreateSignature(other, algorithm, input as CFData, &error) == nil)
        #expect(error?.takeRetainedValue().code == Int(errSecParam))
        if algorithm.rawValue.contains(":digest-") {
            #expect(SecKeyCreateSignature(key, algorithm, Data(count: hashLength + 1) as CFData, &error) == nil)
            #expect(error?.takeRetainedValue().code == Int(errSecParam))
        }
    }

    /// A digest algorithm signs what its message algorithm signs, given the message's hash.
    @Test func digestAndMessageAlgorithmsAgree() throws {
        let message = Data("the message".utf8)
        let digest = OpenSSLTool.sha256(message)
        let rsa = Self.rsa
        // PKCS #1 v1.5 is deterministic: the same signature.
        #expect(SecKeyCreateSignature(rsa, .rsaSignatureDigestPKCS1v15SHA256, digest as CFData, nil)
            == SecKeyCreateSignature(rsa, .rsaSignatureMessagePKCS1v15SHA256, message as CFData, nil))
        let ec = Self.ec
        let signature = try #require(SecKeyCreateSignature(ec, .ecdsaSignatureDigestX962SHA256, digest as CFData, nil))
        #expect(SecKeyVerifySignature(try #require(SecKeyCopyPublicKey(ec)), .ecdsaSignatureMessageX962SHA256, message as CFData, signature as CFData, nil))
        // PSS is not PKCS #1 v1.5.
        let pss = try #require(SecKeyCreateSignature(rsa, .rsaSignatureMessagePSSSHA256, message as CFData, nil))
        #expect(!SecKeyVerifySignature(try #require(SecKeyCopyPublicKey(rsa)), .rsaSignatureMessagePKCS1v15SHA256, message as CFData, pss as CFData, nil))
    }

    @Test func applesErrorsForBadParameters() throws {
        func status(_ parameters: [String: Any]) -> Int? {
            var error: Unmanaged<CFError>?
            guard SecKeyCreateRandomKey(parameters as CFDictionary, &error) == nil else { return nil }
            let failure = error?.takeRetainedValue()
            #expect(failure?.domain == NSOSStatusErrorDomain)
            return failure?.code
        }
        #expect(status([:]) == Int(errSecParam))
        #expect(status([kSecAttrKeyType as String: kSecAttrKeyTypeRSA, kSecAttrKeySizeInBits as String: 512]) == Int(errSecParam))
        #expect(status([kSecAttrKeyType as String: kSecAttrKeyTypeRSA]) == Int(errSecParam))
        #expect(status([kSecAttrKeyType as String: kSecAttrKeyTypeAES, kSecAttrKeySizeInBits as String: 256]) == Int(errSecParam))
        #expect(status([kSecAttrKeyType as String: kSecAttrKeyTypeEC, kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave]) == Int(errSecUnimplemented))
        // Sizes as Apple also takes them: a numeric string; EC defaults to 256 bits.
        #expect(status([kSecAttrKeyType as String: kSecAttrKeyTypeRSA, kSecAttrKeySizeInBits as String: "2048"]) == nil)
        #expect(status([kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom]) == nil)
        // Bytes that are no key, or the wrong class for the bytes.
        var error: Unmanaged<CFError>?
        let privateRSA = [kSecAttrKeyType as String: kSecAttrKeyTypeRSA, kSecAttrKeyClass as String: kSecAttrKeyClassPrivate]
        #expect(SecKeyCreateWithData(Data([0x30, 0x03, 0x02, 0x01, 0x00]) as CFData, privateRSA as CFDictionary, &error) == nil)
        #expect(error?.takeRetainedValue().code == Int(errSecParam))
        let publicKey = try #require(SecKeyCopyPublicKey(Self.rsa))
        let publicBytes = try #require(SecKeyCopyExternalRepresentation(publicKey, nil))
        #expect(SecKeyCreateWithData(publicBytes as CFData, privateRSA as CFDictionary, nil) == nil)
        #expect(SecKeyCreateWithData(publicBytes as CFData, [kSecAttrKeyType as String: kSecAttrKeyTypeRSA] as CFDictionary, nil) == nil)
        // Encryption is not implemented.
        #expect(!SecKeyIsAlgorithmSupported(Self.rsa, .encrypt, .rsaEncryptionOAEPSHA256))
    }
}
