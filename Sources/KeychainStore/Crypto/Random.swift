internal import COpenSSL
import KeychainCore

/// Cryptographically secure random bytes from OpenSSL's `RAND_bytes`.
enum SecureRandom {
    static func bytes(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        try fill(&bytes)
        return bytes
    }

    static func fill(_ bytes: inout [UInt8]) throws {
        let count = bytes.count
        let ok = bytes.withUnsafeMutableBytes { RAND_bytes($0.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(count)) }
        guard ok == 1 else { throw CryptoError.internalFailure("RAND_bytes failed") }
    }

    static func fill(_ buffer: UnsafeMutableRawBufferPointer) throws {
        guard buffer.count > 0 else { return }
        let ok = RAND_bytes(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(buffer.count))
        guard ok == 1 else { throw CryptoError.internalFailure("RAND_bytes failed") }
    }

    /// A new secret key of `count` random bytes, generated in place in locked memory.
    static func key(_ count: Int = 32) throws -> SecretBytes {
        try SecretBytes(count: count) { try fill($0) }
    }
}
