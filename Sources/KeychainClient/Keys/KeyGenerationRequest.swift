import Foundation
import KeychainCore

/// A `SecKeyCreateRandomKey` parameter dictionary: the key to make, and the attributes of each
/// half (the top-level entries merged with kSecPrivateKeyAttrs or kSecPublicKeyAttrs, as Apple's
/// SecKeyGeneratePair merges them).
struct KeyGenerationRequest {
    let family: OpenSSLKey.Family
    let bits: Int
    let privateAttributes: [String: Any]
    let publicAttributes: [String: Any]

    init(_ dictionary: CFDictionary) throws {
        let entries = KeyParameters.entries(dictionary)
        family = try KeyParameters.family(entries[kSecAttrKeyType])
        if let size = entries[kSecAttrKeySizeInBits] {
            guard let number = SecQuery.integer(size) ?? (size as? String).flatMap({ Int64($0) }) else {
                throw KeychainError.param("kSecAttrKeySizeInBits must be a number")
            }
            bits = Int(number)
        } else if family == .ec {
            bits = 256
        } else {
            throw KeychainError.param("kSecAttrKeySizeInBits is missing")
        }
        guard OpenSSLKey.isSupported(family, bits: bits) else {
            throw KeychainError.param("\(family == .rsa ? "RSA" : "EC") key generation failed, invalid key size \(bits)")
        }
        let privateEntries = try KeyParameters.nested(entries[kSecPrivateKeyAttrs], kSecPrivateKeyAttrs)
        let publicEntries = try KeyParameters.nested(entries[kSecPublicKeyAttrs], kSecPublicKeyAttrs)
        for token in [entries[kSecAttrTokenID], privateEntries[kSecAttrTokenID]] {
            if let token { throw KeyParameters.tokenRefusal(token) }
        }
        // The key itself gives its type and size to its item; the halves' own dictionaries win.
        var common = entries
        for key in [kSecPrivateKeyAttrs, kSecPublicKeyAttrs, kSecAttrKeyType, kSecAttrKeySizeInBits] {
            common[key] = nil
        }
        privateAttributes = common.merging(privateEntries) { $1 }
        publicAttributes = common.merging(publicEntries) { $1 }
    }

    /// Stores the halves whose attributes say kSecAttrIsPermanent, public first (as Apple).
    func storePermanentHalves(of key: SecKey) throws {
        if try KeyParameters.isPermanent(publicAttributes) { try store(SecKey(key.key.publicKey()), publicAttributes) }
        if try KeyParameters.isPermanent(privateAttributes) { try store(key, privateAttributes) }
    }

    private func store(_ key: SecKey, _ attributes: [String: Any]) throws {
        var item = attributes
        item[kSecClass] = kSecClassKey
        item[kSecValueRef] = key
        let status = SecItemAdd(item as CFDictionary, nil)
        guard status == errSecSuccess else {
            throw KeychainClient.lastSecItemError ?? KeychainError(KeychainError.Code(rawValue: status) ?? .param)
        }
    }
}
