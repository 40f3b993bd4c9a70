import Foundation
import KeychainCore

/// Apple's `SecKey`: an RSA (1024 to 4096 bits) or elliptic-curve (P-256, P-384, P-521) key,
/// private or public, held in memory by OpenSSL. Private material is wiped when the key is freed
/// (see `OpenSSLKey`). Made by `SecKeyCreateRandomKey` / `SecKeyCreateWithData`, or given back by
/// `SecItemCopyMatching` with `kSecReturnRef` (`item as! SecKey`); stored by `SecItemAdd` with
/// `kSecValueRef` as a key item whose data is the key's external representation.
/// @unchecked Sendable: immutable (see `OpenSSLKey`).
public final class SecKey: @unchecked Sendable, CustomStringConvertible {
    let key: OpenSSLKey

    init(_ key: OpenSSLKey) { self.key = key }

    /// kSecAttrKeyClass: private or public.
    var keyClass: String { key.isPrivate ? kSecAttrKeyClassPrivate : kSecAttrKeyClassPublic }

    /// kSecAttrKeyType: RSA or ECSECPrimeRandom.
    var keyType: String { key.family == .rsa ? kSecAttrKeyTypeRSA : kSecAttrKeyTypeECSECPrimeRandom }

    /// kSecAttrApplicationLabel as Apple computes it: SHA-1 of the public key's bytes (PKCS #1
    /// `RSAPublicKey`, or the X9.63 point), which is also a certificate's `publicKeyHash`.
    func applicationLabel() throws -> Data { Data(OpenSSLKey.sha1(try key.publicBytes())) }

    /// The attributes Apple's SecKeyCopyAttributes gives (SecKey.c), keyed by Apple's codes, with
    /// the external representation as `v_Data` when `includingData`.
    func attributes(includingData: Bool) throws -> [String: Any] {
        let isPrivate = key.isPrivate
        var attributes: [String: Any] = [
            kSecClass: kSecClassKey,
            kSecAttrKeyClass: keyClass,
            kSecAttrKeyType: keyType,
            kSecAttrApplicationLabel: try applicationLabel(),
            kSecAttrKeySizeInBits: key.sizeInBits,
            kSecAttrEffectiveKeySize: key.sizeInBits,
            kSecAttrIsPermanent: true,
            kSecAttrIsSensitive: false,
            kSecAttrIsExtractable: true,
            kSecAttrCanEncrypt: !isPrivate,
            kSecAttrCanDecrypt: isPrivate,
            kSecAttrCanDerive: true,
            kSecAttrCanSign: isPrivate,
            kSecAttrCanVerify: !isPrivate,
            kSecAttrCanWrap: !isPrivate,
            kSecAttrCanUnwrap: isPrivate,
        ]
        if includingData {
            var bytes = try key.externalRepresentation()
            defer { SecretBytes.wipe(&bytes) }
            attributes[kSecValueData] = Data(bytes)
        }
        return attributes
    }

    /// The attributes that find this key's item: class, type, size and the public key's hash
    /// (what a `kSecValueRef` in a search, update or delete stands for).
    func identifyingAttributes() throws -> [String: Any] {
        [
            kSecAttrKeyClass: keyClass, kSecAttrKeyType: keyType, kSecAttrKeySizeInBits: key.sizeInBits,
            kSecAttrApplicationLabel: try applicationLabel(),
        ]
    }

    /// The key of a key item: its data read by its `keyType` and `keyClass` (JSON names).
    /// A symmetric key or another type has no SecKey here: errSecUnimplemented.
    convenience init(itemData: [UInt8], keyType: String?, keyClass: String?) throws {
        let family: OpenSSLKey.Family
        switch keyType {
        case "rsa": family = .rsa
        case "ecsecPrimeRandom": family = .ec
        default: throw KeychainError(.unimplemented, "no SecKey for a key item of type \(keyType ?? "none")")
        }
        guard keyClass == "private" || keyClass == "public" else {
            throw KeychainError(.unimplemented, "no SecKey for a key item of class \(keyClass ?? "none")")
        }
        do {
            self.init(try OpenSSLKey.importing(itemData, family: family, isPrivate: keyClass == "private"))
        } catch {
            throw KeychainError.decode("the key item's data is not a \(keyClass!) \(keyType!) key")
        }
    }

    public var description: String {
        "<SecKey \(key.family == .rsa ? "RSA" : "EC") \(key.isPrivate ? "private" : "public") key, \(key.sizeInBits) bits>"
    }
}
