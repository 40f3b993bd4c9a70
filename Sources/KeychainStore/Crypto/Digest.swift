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
}
