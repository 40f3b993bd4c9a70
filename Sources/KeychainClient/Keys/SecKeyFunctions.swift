public import Foundation
import KeychainCore

// Apple's SecKey functions with Apple's signatures: failures give nil (or false) and, when the
// caller passes an `Unmanaged<CFError>?` out-parameter, a retained CFError in
// NSOSStatusErrorDomain whose code is the OSStatus Apple gives (errSecParam for bad parameters
// and for an algorithm the key does not support, errSecVerifyFailed for a signature that does not
// verify, errSecUnimplemented for what keychaind cannot do). Only `SecKeyCreateRandomKey` with
// kSecAttrIsPermanent talks to keychaind; the others are local.

/// A new private key (kSecAttrKeyType RSA with kSecAttrKeySizeInBits 1024...4096, or
/// ECSECPrimeRandom with 256, 384 or 521). With kSecAttrIsPermanent true (at the top, or in
/// kSecPrivateKeyAttrs / kSecPublicKeyAttrs) the halves so marked are stored, as Apple does:
/// the public key first, each as `SecItemAdd` with `kSecValueRef` and its attributes.
public func SecKeyCreateRandomKey(_ parameters: CFDictionary, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?)
    -> SecKey?
{
    SecKeyCall.run(error) {
        let request = try KeyGenerationRequest(parameters)
        let key = SecKey(try OpenSSLKey.generate(request.family, bits: request.bits))
        try request.storePermanentHalves(of: key)
        return key
    }
}

/// A key from Apple's external representation: kSecAttrKeyType and kSecAttrKeyClass (private or
/// public) say how to read `keyData` (PKCS #1 for RSA, X9.63 for EC).
public func SecKeyCreateWithData(
    _ keyData: CFData, _ attributes: CFDictionary, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecKey? {
    SecKeyCall.run(error) {
        let request = try KeyDescription(attributes)
        var bytes = [UInt8](keyData)
        defer { SecretBytes.wipe(&bytes) }
        return SecKey(try OpenSSLKey.importing(bytes, family: request.family, isPrivate: request.isPrivate))
    }
}

/// The key's external representation (Apple's formats; for a private key, its private material).
public func SecKeyCopyExternalRepresentation(_ key: SecKey, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?)
    -> CFData?
{
    SecKeyCall.run(error) {
        var bytes = try key.key.externalRepresentation()
        defer { SecretBytes.wipe(&bytes) }
        return Data(bytes)
    }
}

/// The public half of a private key, or the public key itself.
public func SecKeyCopyPublicKey(_ key: SecKey) -> SecKey? {
    guard key.key.isPrivate else { return key }
    return try? SecKey(key.key.publicKey())
}

/// The key's attributes, as Apple's SecKeyCopyAttributes gives them (with `v_Data`).
public func SecKeyCopyAttributes(_ key: SecKey) -> CFDictionary? {
    (try? key.attributes(includingData: true)).map { $0 as NSDictionary }
}

/// Signs `dataToSign` (the message, or its digest for the `...Digest...` algorithms) with a private key.
public func SecKeyCreateSignature(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ dataToSign: CFData,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    SecKeyCall.run(error) {
        let scheme = try SecKeyCall.scheme(algorithm, for: key, .sign)
        return Data(try key.key.sign([UInt8](dataToSign), scheme))
    }
}

/// Whether `signature` is the signature of `signedData` by the private half of this public key;
/// false with errSecVerifyFailed when it is not.
public func SecKeyVerifySignature(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ signedData: CFData, _ signature: CFData,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> Bool {
    do {
        let scheme = try SecKeyCall.scheme(algorithm, for: key, .verify)
        if try key.key.verify([UInt8](signature), of: [UInt8](signedData), scheme) { return true }
        let family = key.key.family == .rsa ? "RSA" : "EC"
        CFError.report(.osStatus(errSecVerifyFailed, "\(family) signature verification failed, no match"), to: error)
    } catch let failure {
        SecKeyCall.report(failure, to: error)
    }
    return false
}

/// Whether the key can do `operation` with `algorithm`: signing with a private key, verifying
/// with a public key, for the RSA and ECDSA signature algorithms of SecKeyAlgorithm.swift.
public func SecKeyIsAlgorithmSupported(_ key: SecKey, _ operation: SecKeyOperationType, _ algorithm: SecKeyAlgorithm)
    -> Bool
{
    (try? SecKeyCall.scheme(algorithm, for: key, operation)) != nil
}

enum SecKeyCall {
    /// Runs one SecKey function: a thrown error goes to the out-parameter, the result is nil.
    static func run<Result>(_ out: UnsafeMutablePointer<Unmanaged<CFError>?>?, _ body: () throws -> Result?)
        -> Result?
    {
        do {
            return try body()
        } catch {
            report(error, to: out)
            return nil
        }
    }

    /// A thrown error as Apple's CFError (an unexpected one as errSecParam).
    static func report(_ error: any Error, to out: UnsafeMutablePointer<Unmanaged<CFError>?>?) {
        CFError.report(.keychain(error as? KeychainError ?? .param()), to: out)
    }

    /// The signature scheme for `algorithm` when `key` supports it for `operation`; else
    /// errSecParam with Apple's wording.
    static func scheme(_ algorithm: SecKeyAlgorithm, for key: SecKey, _ operation: SecKeyOperationType) throws
        -> SignatureScheme
    {
        let family: SignatureScheme.KeyFamily = key.key.family == .rsa ? .rsa : .ec
        guard let scheme = SignatureScheme(algorithm), scheme.family == family,
            operation == .sign && key.key.isPrivate || operation == .verify && !key.key.isPrivate
        else { throw KeychainError.param("\(algorithm.rawValue): algorithm not supported by the key \(key)") }
        return scheme
    }
}
