internal import COpenSSL
import KeychainCore

/// SHA-256 and HMAC-SHA-256 over OpenSSL.
public enum Digest {
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { sha256($0) }
    }

    static func sha256(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = EVP_Digest(bytes.baseAddress, bytes.count, &digest, &length, sha256Algorithm.pointer, nil)
        precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed")
        return digest
    }

    /// SHA-256 fetched from the provider once: `EVP_sha256()` makes OpenSSL 3 look the
    /// implementation up again on every digest (most of the cost of hashing a client token).
    private static let sha256Algorithm = FetchedDigest(name: "SHA256")

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

/// An `EVP_MD` fetched by name, kept for the life of the process.
private final class FetchedDigest: Sendable {
    nonisolated(unsafe) let pointer: OpaquePointer

    init(name: String) {
        guard let fetched = EVP_MD_fetch(nil, name, nil) else { preconditionFailure("EVP_MD_fetch(\(name)) failed") }
        pointer = fetched
    }
}
