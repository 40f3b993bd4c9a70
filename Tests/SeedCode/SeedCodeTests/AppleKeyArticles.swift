// Apple code that the seeds' key storage leads to, written as Apple's articles "Generating New
// Cryptographic Keys", "Storing Keys as Data" and "Signing and Verifying" show it (not seed text:
// these give the seeds' `<# a key #>` and use the key). `<# an error #>` is `SeedError`.
// `import Security` is `import KeychainClient`.
import Foundation
import KeychainClient

enum AppleKeyArticles {
    /// "Generating New Cryptographic Keys": a private key stored as part of its creation.
    static func generatePermanentKey(tag: Data) throws -> SecKey {
        let attributes: [String: Any] =
            [kSecAttrKeyType as String:            kSecAttrKeyTypeRSA,
             kSecAttrKeySizeInBits as String:      2048,
             kSecPrivateKeyAttrs as String:
                [kSecAttrIsPermanent as String:    true,
                 kSecAttrApplicationTag as String: tag]
        ]

        var error: Unmanaged<CFError>?
        guard let privateKey = SecKeyCreateRandomKey(attributes as CFDictionary, &error) else {
            throw error!.takeRetainedValue() as Error
        }
        return privateKey
    }

    /// "Generating New Cryptographic Keys", with kSecAttrIsPermanent false: a key only in memory.
    static func generateKey(type: CFString, bits: Int) throws -> SecKey {
        let attributes: [String: Any] =
            [kSecAttrKeyType as String:            type,
             kSecAttrKeySizeInBits as String:      bits,
             kSecPrivateKeyAttrs as String:
                [kSecAttrIsPermanent as String:    false]
        ]

        var error: Unmanaged<CFError>?
        guard let privateKey = SecKeyCreateRandomKey(attributes as CFDictionary, &error) else {
            throw error!.takeRetainedValue() as Error
        }
        return privateKey
    }

    /// "Storing Keys as Data": out to bytes and back.
    static func roundTrip(_ key: SecKey) throws -> SecKey {
        var error: Unmanaged<CFError>?
        guard let data = SecKeyCopyExternalRepresentation(key, &error) as Data? else {
            throw error!.takeRetainedValue() as Error
        }
        let options: [String: Any] = [kSecAttrKeyType as String: kSecAttrKeyTypeRSA,
                                      kSecAttrKeyClass as String: kSecAttrKeyClassPrivate,
                                      kSecAttrKeySizeInBits as String : 2048]
        guard let key = SecKeyCreateWithData(data as CFData,
                                             options as CFDictionary,
                                             &error) else {
                                                throw error!.takeRetainedValue() as Error
        }
        return key
    }

    /// "Signing and Verifying": a signature by the private key...
    static func sign(_ data: Data, with privateKey: SecKey, _ algorithm: SecKeyAlgorithm) throws -> Data {
        guard SecKeyIsAlgorithmSupported(privateKey, .sign, algorithm) else {
            throw SeedError(status: errSecParam)
        }
        var error: Unmanaged<CFError>?
        guard let signature = SecKeyCreateSignature(privateKey,
                                                    algorithm,
                                                    data as CFData,
                                                    &error) as Data? else {
                                                        throw error!.takeRetainedValue() as Error
        }
        return signature
    }

    /// ... checked with the public key.
    static func verify(_ signature: Data, of data: Data, with privateKey: SecKey, _ algorithm: SecKeyAlgorithm) throws {
        guard let publicKey = SecKeyCopyPublicKey(privateKey) else {
            throw SeedError(status: errSecParam)
        }
        guard SecKeyIsAlgorithmSupported(publicKey, .verify, algorithm) else {
            throw SeedError(status: errSecParam)
        }
        var error: Unmanaged<CFError>?
        guard SecKeyVerifySignature(publicKey,
                                    algorithm,
                                    data as CFData,
                                    signature as CFData,
                                    &error) else {
                                        throw error!.takeRetainedValue() as Error
        }
    }
}
