internal import COpenSSL
import KeychainCore

/// An HMAC-SHA-256 key prepared once (RFC 2104): the SHA-256 states after absorbing the key
/// xor ipad and xor opad, so each MAC costs two small hashes instead of re-deriving the pads.
/// The audit log tags every attribute of every request with it.
///
/// `@unchecked Sendable`: the two prepared contexts are only read (copied) after `init`.
/// `EVP_MD_CTX_free` clears their state when the key is released.
final class HMACKey: @unchecked Sendable {
    private let inner: OpaquePointer
    private let outer: OpaquePointer

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
        inner = Self.prepared(innerPad)
        outer = Self.prepared(outerPad)
    }

    deinit {
        EVP_MD_CTX_free(inner)
        EVP_MD_CTX_free(outer)
    }

    /// HMAC-SHA-256 of `message`. The inner digest stays on the stack: each array made here
    /// cost an unspecialized allocation with a type-metadata lookup (~550 instructions).
    func mac(_ message: [UInt8]) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(context) }
        return [UInt8](unsafeUninitializedCapacity: 32) { mac, count in
            let ok = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { innerDigest in
                var ok = EVP_MD_CTX_copy_ex(context, inner) == 1
                ok = ok && message.withUnsafeBytes { EVP_DigestUpdate(context, $0.baseAddress, $0.count) } == 1
                ok = ok && EVP_DigestFinal_ex(context, innerDigest.baseAddress, nil) == 1
                ok = ok && EVP_MD_CTX_copy_ex(context, outer) == 1
                ok = ok && EVP_DigestUpdate(context, innerDigest.baseAddress, 32) == 1
                return ok && EVP_DigestFinal_ex(context, mac.baseAddress, nil) == 1
            }
            precondition(ok, "HMAC-SHA-256 failed")
            count = 32
        }
    }

    private static func prepared(_ pad: [UInt8]) -> OpaquePointer {
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1,
            EVP_DigestUpdate(context, pad, pad.count) == 1
        else { preconditionFailure("SHA-256 context setup failed") }
        return context
    }
}
