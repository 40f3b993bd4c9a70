internal import COpenSSL
import KeychainCore

/// An HMAC-SHA-256 key prepared once (RFC 2104): the SHA-256 states after absorbing the key
/// xor ipad and xor opad, so each MAC costs two small hashes on copies of them, with no
/// allocation (`COpenSSL_hmac_sha256`). The audit log tags every attribute of every request
/// with it.
///
/// `@unchecked Sendable`: the prepared states are only read after `init`. They are key
/// material: wiped when the key is released.
final class HMACKey: @unchecked Sendable {
    static let macSize = 32

    private let prepared: UnsafeMutablePointer<COpenSSL_hmac_sha256_key>

    /// `key` must not be longer than SHA-256's block (64 bytes); keychaind's keys are 32.
    init(_ key: SecretBytes) {
        precondition(key.count <= 64, "HMAC keys longer than a block are hashed first; not needed here")
        var innerPad = [UInt8](repeating: 0x36, count: 64)
        var outerPad = [UInt8](repeating: 0x5c, count: 64)
        key.withUnsafeBytes { bytes in
            for index in bytes.indices {
                innerPad[index] ^= bytes[index]
                outerPad[index] ^= bytes[index]
            }
        }
        defer {
            SecretBytes.wipe(&innerPad)
            SecretBytes.wipe(&outerPad)
        }
        prepared = .allocate(capacity: 1)
        COpenSSL_hmac_sha256_prepare(prepared, innerPad, outerPad)
    }

    deinit {
        OPENSSL_cleanse(prepared, MemoryLayout<COpenSSL_hmac_sha256_key>.size)
        prepared.deallocate()
    }

    /// Writes HMAC-SHA-256 of `message` into `mac` (`macSize` bytes).
    func mac(_ message: UnsafeRawBufferPointer, into mac: UnsafeMutableRawBufferPointer) {
        precondition(mac.count >= Self.macSize, "an HMAC-SHA-256 takes 32 bytes")
        COpenSSL_hmac_sha256(prepared, message.baseAddress, message.count, mac.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }
}
