internal import COpenSSL
public import KeychainCore

/// SHA-256 and HMAC-SHA-256 over OpenSSL.
public enum Digest {
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { sha256($0) }
    }

    /// On a state on the stack (`COpenSSL_sha256`): a bearer token is hashed on every request,
    /// and `EVP_Digest` allocates a context each time.
    static func sha256(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { digest, count in
            COpenSSL_sha256(bytes.baseAddress, bytes.count, digest.baseAddress)
            count = 32
        }
    }

    /// HMAC-SHA-256 of `message` under `key`.
    public static func hmacSHA256(key: SecretBytes, _ message: [UInt8]) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let result = key.withUnsafeBytes { key in
            message.withUnsafeBufferPointer { message in
                HMAC(EVP_sha256(), key.baseAddress, Int32(key.count), message.baseAddress, message.count, &mac, &length)
            }
        }
        precondition(result != nil && length == 32, "HMAC(SHA-256) failed")
        return mac
    }

    /// HMAC-SHA-256 of `message` under `key`, written into `mac` (32 bytes).
    static func hmacSHA256(key: UnsafeRawBufferPointer, _ message: UnsafeRawBufferPointer, into mac: UnsafeMutableRawBufferPointer) {
        precondition(mac.count >= 32, "an HMAC-SHA-256 takes 32 bytes")
        var length: UInt32 = 0
        let result = HMAC(
            EVP_sha256(), key.baseAddress, Int32(key.count), message.baseAddress?.assumingMemoryBound(to: UInt8.self),
            message.count, mac.baseAddress!.assumingMemoryBound(to: UInt8.self), &length)
        precondition(result != nil && length == 32, "HMAC(SHA-256) failed")
    }

    /// HKDF-SHA-256 (RFC 5869) with a 32-byte output: a key for one purpose, named by `info`,
    /// from `key`: `hkdfExpand(hkdfExtract(key, salt), info)`.
    static func hkdfSHA256(key: SecretBytes, salt: [UInt8] = [], info: [UInt8]) -> SecretBytes {
        hkdfExpand(pseudoRandomKey: hkdfExtract(key: key, salt: salt), info: info)
    }

    /// HKDF's extract step: the pseudo-random key from which `hkdfExpand` makes purpose keys.
    /// It cannot be turned back into `key`.
    static func hkdfExtract(key: SecretBytes, salt: [UInt8] = []) -> SecretBytes {
        // RFC 5869 §2.2: no salt is a salt of HashLen zeros.
        let salt = salt.isEmpty ? [UInt8](repeating: 0, count: 32) : salt
        return SecretBytes(count: 32) { prk in
            salt.withUnsafeBytes { salt in key.withUnsafeBytes { hmacSHA256(key: salt, $0, into: prk) } }
        }
    }

    /// HKDF's expand step for one 32-byte block: the key named by `info`.
    static func hkdfExpand(pseudoRandomKey: SecretBytes, info: [UInt8]) -> SecretBytes {
        let block = info + [1]
        return SecretBytes(count: 32) { output in
            pseudoRandomKey.withUnsafeBytes { prk in block.withUnsafeBytes { hmacSHA256(key: prk, $0, into: output) } }
        }
    }
}
