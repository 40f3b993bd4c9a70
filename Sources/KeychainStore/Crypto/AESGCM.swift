#if canImport(Glibc)
import Glibc
#endif
internal import COpenSSL
import Foundation
import KeychainConcurrency
package import KeychainCore

/// AES-256-GCM with 96-bit nonces and 128-bit tags over OpenSSL EVP.
///
/// One object per key. The key schedule is set once on reused `EVP_CIPHER_CTX`s (re-initialised
/// per message with only the nonce), which is ~3x faster than a fresh context per message. Each
/// context sits behind its own lock, so the object is shared between threads safely. Sealing
/// (writes) has one context; opening runs on every read, by all of libmicrohttpd's worker
/// threads at once, so it has one context per processor (see `withOpener`). Every context is
/// freed, and so cleansed, when the object is released.
package final class AESGCM: Sendable {
    static let keySize = 32
    static let nonceSize = 12
    static let tagSize = 16
    /// The most opening contexts one key gets, however many processors there are.
    static let maxOpeners = 16

    private let sealer: PThreadLocked<CipherContext>
    private let openers: [PThreadLocked<CipherContext>]

    package init(key: SecretBytes) throws {
        guard key.count == Self.keySize else { throw CryptoError.invalidInput("key must be 32 bytes") }
        sealer = PThreadLocked(try CipherContext(key: key, encrypt: true))
        let openerCount = min(max(ProcessInfo.processInfo.activeProcessorCount, 1), Self.maxOpeners)
        openers = try (0..<openerCount).map { _ in PThreadLocked(try CipherContext(key: key, encrypt: false)) }
    }

    /// How many contexts open in parallel.
    var openerCount: Int { openers.count }

    /// Runs `body` with an opening context no other thread is using: the first free one, starting
    /// at the one the calling thread's id picks (so threads usually start apart); waits for that
    /// one only when all are busy.
    private func withOpener<Result>(_ body: (CipherContext) throws -> Result) rethrows -> Result {
        let threadHash = UInt(pthread_self()) &* 0x9E37_79B9_7F4A_7C15
        let start = Int(threadHash >> 32) % openers.count
        for offset in 0..<openers.count {
            if let result = try openers[(start + offset) % openers.count].withLockIfAvailable({ try body($0) }) {
                return result
            }
        }
        return try openers[start].withLock { try body($0) }
    }

    /// Seals `plaintext` under `nonce` (fresh random when nil) and `aad`; appends
    /// `ciphertext | tag` to `output` and returns the nonce used.
    @discardableResult
    func seal(
        _ plaintext: UnsafeRawBufferPointer, nonce: [UInt8]? = nil, aad: UnsafeRawBufferPointer,
        appendingTo output: inout [UInt8]
    ) throws -> [UInt8] {
        let nonce = try nonce ?? SecureRandom.bytes(Self.nonceSize)
        guard nonce.count == Self.nonceSize else { throw CryptoError.invalidInput("nonce must be 12 bytes") }
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: plaintext.count + Self.tagSize))
        try sealer.withLock { context in
            try output.withUnsafeMutableBytes { out in
                let body = UnsafeMutableRawBufferPointer(rebasing: out[start..<(start + plaintext.count)])
                let tag = UnsafeMutableRawBufferPointer(rebasing: out[(start + plaintext.count)...])
                try context.seal(plaintext, nonce: nonce, aad: aad, ciphertext: body, tag: tag)
            }
        }
        return nonce
    }

    /// Seals `plaintext` under `nonce` and `aad` into `output`, which holds exactly
    /// `ciphertext | tag` (`plaintext.count + tagSize` bytes): for large buffers reused from one
    /// call to the next (backup chunks).
    func seal(
        _ plaintext: UnsafeRawBufferPointer, nonce: [UInt8], aad: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) throws {
        guard nonce.count == Self.nonceSize else { throw CryptoError.invalidInput("nonce must be 12 bytes") }
        guard output.count == plaintext.count + Self.tagSize else { throw CryptoError.invalidInput("output size") }
        try sealer.withLock { context in
            try context.seal(
                plaintext, nonce: nonce, aad: aad,
                ciphertext: UnsafeMutableRawBufferPointer(rebasing: output[0..<plaintext.count]),
                tag: UnsafeMutableRawBufferPointer(rebasing: output[plaintext.count...]))
        }
    }

    /// Seals `plaintext`, returning `ciphertext | tag`.
    func seal(_ plaintext: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        var output: [UInt8] = []
        try plaintext.withUnsafeBytes { plaintext in
            try aad.withUnsafeBytes { _ = try seal(plaintext, nonce: nonce, aad: $0, appendingTo: &output) }
        }
        return output
    }

    /// Opens `ciphertext` with `tag`, writing the plaintext straight into a new `SecretBytes`
    /// (locked in memory when `lockedInMemory`: keys are, item secrets passing through are not).
    /// Throws `CryptoError.authenticationFailure` when anything was altered; no plaintext escapes then.
    func open(
        ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        aad: UnsafeRawBufferPointer, lockedInMemory: Bool = true
    ) throws -> SecretBytes {
        guard nonce.count == Self.nonceSize else { throw CryptoError.invalidInput("nonce must be 12 bytes") }
        guard tag.count == Self.tagSize else { throw CryptoError.invalidInput("tag must be 16 bytes") }
        return try withOpener { context in
            try SecretBytes(count: ciphertext.count, lockedInMemory: lockedInMemory) { plaintext in
                try context.open(ciphertext, nonce: nonce, aad: aad, tag: tag, plaintext: plaintext)
            }
        }
    }

    func open(ciphertext: [UInt8], tag: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> SecretBytes {
        try ciphertext.withUnsafeBytes { c in
            try tag.withUnsafeBytes { t in
                try nonce.withUnsafeBytes { n in
                    try aad.withUnsafeBytes { a in try open(ciphertext: c, tag: t, nonce: n, aad: a) }
                }
            }
        }
    }
}

/// Owns one `EVP_CIPHER_CTX` keyed for AES-256-GCM in one direction; freed in `deinit`.
/// `@unchecked Sendable` only so it can live in a `PThreadLocked`: `AESGCM` never touches it
/// outside that lock, so one thread at a time uses the C context. `EVP_CIPHER_CTX_free` cleanses
/// the key schedule.
private final class CipherContext: @unchecked Sendable {
    private let context: OpaquePointer
    private let encrypt: Bool

    init(key: SecretBytes, encrypt: Bool) throws {
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError.internalFailure("EVP_CIPHER_CTX_new") }
        self.context = context
        self.encrypt = encrypt
        let ok = key.withUnsafeBytes { key in
            EVP_CipherInit_ex(
                context, EVP_aes_256_gcm(), nil, key.baseAddress!.assumingMemoryBound(to: UInt8.self), nil,
                encrypt ? 1 : 0)
        }
        guard ok == 1 else { throw CryptoError.internalFailure("EVP_CipherInit_ex") }
    }

    deinit { EVP_CIPHER_CTX_free(context) }

    private func start(nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer) throws {
        let ok = EVP_CipherInit_ex(
            context, nil, nil, nil, nonce.baseAddress!.assumingMemoryBound(to: UInt8.self), encrypt ? 1 : 0)
        guard ok == 1 else { throw CryptoError.internalFailure("EVP_CipherInit_ex (nonce)") }
        if !aad.isEmpty {
            var outLength: Int32 = 0
            let ok = EVP_CipherUpdate(
                context, nil, &outLength, aad.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(aad.count))
            guard ok == 1 else { throw CryptoError.internalFailure("EVP_CipherUpdate (aad)") }
        }
    }

    func seal(
        _ plaintext: UnsafeRawBufferPointer, nonce: [UInt8], aad: UnsafeRawBufferPointer,
        ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer
    ) throws {
        try nonce.withUnsafeBytes { try start(nonce: $0, aad: aad) }
        var written: Int32 = 0
        if plaintext.count > 0 {
            let ok = EVP_CipherUpdate(
                context, ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self), &written,
                plaintext.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(plaintext.count))
            guard ok == 1, Int(written) == plaintext.count else { throw CryptoError.internalFailure("EVP_CipherUpdate") }
        }
        var scratch: (UInt64, UInt64) = (0, 0)
        var finalLength: Int32 = 0
        let finished = withUnsafeMutableBytes(of: &scratch) {
            EVP_CipherFinal_ex(context, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), &finalLength)
        }
        guard finished == 1, finalLength == 0 else {
            throw CryptoError.internalFailure("EVP_CipherFinal_ex")
        }
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(AESGCM.tagSize), tag.baseAddress) == 1 else {
            throw CryptoError.internalFailure("EVP_CTRL_GCM_GET_TAG")
        }
    }

    func open(
        _ ciphertext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
        tag: UnsafeRawBufferPointer, plaintext: UnsafeMutableRawBufferPointer
    ) throws {
        try start(nonce: nonce, aad: aad)
        var written: Int32 = 0
        if ciphertext.count > 0 {
            let ok = EVP_CipherUpdate(
                context, plaintext.baseAddress!.assumingMemoryBound(to: UInt8.self), &written,
                ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(ciphertext.count))
            guard ok == 1, Int(written) == ciphertext.count else { throw CryptoError.internalFailure("EVP_CipherUpdate") }
        }
        // SET_TAG only reads the tag (OpenSSL's signature is not const).
        guard EVP_CIPHER_CTX_ctrl(
            context, EVP_CTRL_GCM_SET_TAG, Int32(AESGCM.tagSize), UnsafeMutableRawPointer(mutating: tag.baseAddress))
            == 1
        else {
            throw CryptoError.internalFailure("EVP_CTRL_GCM_SET_TAG")
        }
        var scratch: (UInt64, UInt64) = (0, 0)
        var finalLength: Int32 = 0
        let finished = withUnsafeMutableBytes(of: &scratch) {
            EVP_CipherFinal_ex(context, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), &finalLength)
        }
        guard finished == 1 else {
            // SecretBytes wipes the partially written plaintext when this throws.
            throw CryptoError.authenticationFailure
        }
    }
}
