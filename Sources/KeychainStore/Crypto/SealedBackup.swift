#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
package import KeychainCore

/// The sealed backup format: a database copy encrypted and authenticated as a whole, in chunks,
/// so that sealing and opening hold one chunk in memory whatever the database's size.
///
/// ```
/// header  magic "KEYCHAIND-BACKUP" (16) | version 1 (1) | chunk size, UInt32 BE (4) | salt (32)
///         | header check (32) = HMAC-SHA-256(file key, the 53 bytes before it)
/// chunks  ciphertext | tag (16), AES-256-GCM under the file key, nonce = 0⁴ | index (UInt64 BE),
///         AAD = header | index (UInt64 BE) | final flag (1 byte)
/// ```
///
/// The backup key is HKDF-SHA-256(master key, info "keychaind backup key v1"); each file has its
/// own key, HKDF(backup key, salt, info "keychaind backup file v1"), so the counter nonces never
/// repeat under one key. Every chunk but the last holds `chunk size` bytes; the last, flagged
/// final, holds the rest (possibly nothing). So a changed byte, a chunk moved or swapped, a cut
/// (even at a chunk boundary) or bytes appended all fail, and a backup of another vault (or made
/// under an older master key) fails at the header check, before any chunk.
package enum SealedBackup {
    static let magic = Array("KEYCHAIND-BACKUP".utf8)
    static let version: UInt8 = 1
    static let defaultChunkSize = 1 << 20
    /// The largest chunk `open` accepts, so a forged header cannot make it allocate more.
    static let maxChunkSize = 16 << 20
    static let saltSize = 32
    static let checkSize = 32
    static let headerSize = 16 + 1 + 4 + saltSize + checkSize
    static let keyLabel = Array("keychaind backup key v1".utf8)
    static let fileKeyLabel = Array("keychaind backup file v1".utf8)

    /// The key a vault seals its backups under, derived from its master key.
    package static func backupKey(masterKey: SecretBytes) -> SecretBytes {
        Digest.hkdfSHA256(key: masterKey, info: keyLabel)
    }

    /// Seals the file at `source` into a new file at `destination` (created 0600, must not exist).
    static func seal(from source: String, to destination: String, key: SecretBytes, chunkSize: Int = defaultChunkSize)
        throws
    {
        precondition(chunkSize > 0 && chunkSize <= maxChunkSize, "chunk size out of range")
        let input = try BackupFile(reading: source)
        let output = try BackupFile(creating: destination)
        var header = magic + [version]
        SealedBox.appendUInt32(UInt32(chunkSize), to: &header)
        header += try SecureRandom.bytes(saltSize)
        let fileKey = Digest.hkdfSHA256(key: key, salt: Array(header[(header.count - saltSize)...]), info: fileKeyLabel)
        header += check(of: header, fileKey: fileKey)
        try output.write(header)
        let cipher = try AESGCM(key: fileKey)
        let size = try input.size()
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var sealed = [UInt8](repeating: 0, count: chunkSize + AESGCM.tagSize)
        var index: UInt64 = 0
        var remaining = size
        while true {
            let count = min(remaining, chunkSize)
            let isFinal = remaining < chunkSize
            try input.read(into: &buffer, count: count)
            try buffer.withUnsafeBytes { plaintext in
                try sealed.withUnsafeMutableBytes { out in
                    try chunkAAD(header: header, index: index, isFinal: isFinal).withUnsafeBytes { aad in
                        try cipher.seal(
                            UnsafeRawBufferPointer(rebasing: plaintext[0..<count]), nonce: nonce(index), aad: aad,
                            into: UnsafeMutableRawBufferPointer(rebasing: out[0..<(count + AESGCM.tagSize)]))
                    }
                }
            }
            try sealed.withUnsafeBytes { try output.write(UnsafeRawBufferPointer(rebasing: $0[0..<(count + AESGCM.tagSize)])) }
            remaining -= count
            index += 1
            if isFinal { break }
        }
        SecretBytes.wipe(&buffer)
        try output.sync()
    }

    /// Opens the sealed backup at `source` with the first of `keys` (backup keys) that its header
    /// check accepts, writing the database into a new file at `destination` (created 0600). Every
    /// chunk is authenticated before it is written; on any failure `destination` may hold a
    /// prefix and must be removed by the caller. Returns the index of the key that opened it.
    @discardableResult
    package static func open(from source: String, to destination: String, keys: [SecretBytes]) throws(SealedBackupError) -> Int {
        do {
            let input = try BackupFile(reading: source)
            let size = try input.size()
            guard size >= headerSize else {
                throw size >= magic.count && (try? input.readPrefix(magic.count)) == magic
                    ? SealedBackupError.truncated : SealedBackupError.notSealed
            }
            var header = [UInt8](repeating: 0, count: headerSize)
            try input.read(into: &header, count: headerSize)
            guard Array(header[0..<magic.count]) == magic else { throw SealedBackupError.notSealed }
            guard header[magic.count] == version else { throw SealedBackupError.unsupportedVersion(header[magic.count]) }
            let chunkSize = Int(header[17]) << 24 | Int(header[18]) << 16 | Int(header[19]) << 8 | Int(header[20])
            let signed = Array(header[0..<(headerSize - checkSize)])
            let salt = Array(signed[(signed.count - saltSize)...])
            var opened: (index: Int, fileKey: SecretBytes)?
            for (index, key) in keys.enumerated() {
                let fileKey = Digest.hkdfSHA256(key: key, salt: salt, info: fileKeyLabel)
                if constantTimeEqual(check(of: signed, fileKey: fileKey), Array(header[signed.count...])) {
                    opened = (index, fileKey)
                    break
                }
            }
            guard let opened else { throw SealedBackupError.foreignKey }
            guard chunkSize > 0 && chunkSize <= maxChunkSize else { throw SealedBackupError.altered(chunk: 0) }
            let cipher = try AESGCM(key: opened.fileKey)
            let output = try BackupFile(creating: destination)
            let record = chunkSize + AESGCM.tagSize
            var buffer = [UInt8](repeating: 0, count: record)
            var index: UInt64 = 0
            var remaining = size - headerSize
            while true {
                // The last record is the one that reaches the end of the file; it must be final.
                let isFinal = remaining <= record
                let count = min(remaining, record)
                guard count >= AESGCM.tagSize else { throw SealedBackupError.truncated }
                try input.read(into: &buffer, count: count)
                let plaintext: SecretBytes
                do {
                    plaintext = try openChunk(
                        buffer, count: count, index: index, isFinal: isFinal, header: header, cipher: cipher)
                } catch {
                    // A last record that fails as final but would open as a middle one is a cut.
                    if isFinal, (try? openChunk(
                        buffer, count: count, index: index, isFinal: false, header: header, cipher: cipher)) != nil
                    {
                        throw SealedBackupError.truncated
                    }
                    throw SealedBackupError.altered(chunk: Int(index))
                }
                try plaintext.withUnsafeBytes { try output.write($0) }
                remaining -= count
                index += 1
                if isFinal { break }
            }
            try output.sync()
            return opened.index
        } catch let error as SealedBackupError {
            throw error
        } catch {
            throw SealedBackupError.io("\(error)")
        }
    }

    /// The plaintext of the record in `buffer`'s first `count` bytes, opened as chunk `index`
    /// (final or not: its AAD says which).
    private static func openChunk(
        _ buffer: [UInt8], count: Int, index: UInt64, isFinal: Bool, header: [UInt8], cipher: AESGCM
    ) throws -> SecretBytes {
        try buffer.withUnsafeBytes { raw in
            try chunkAAD(header: header, index: index, isFinal: isFinal).withUnsafeBytes { aad in
                try nonce(index).withUnsafeBytes { nonce in
                    try cipher.open(
                        ciphertext: UnsafeRawBufferPointer(rebasing: raw[0..<(count - AESGCM.tagSize)]),
                        tag: UnsafeRawBufferPointer(rebasing: raw[(count - AESGCM.tagSize)..<count]),
                        nonce: nonce, aad: aad, lockedInMemory: false)
                }
            }
        }
    }

    private static func check(of signed: [UInt8], fileKey: SecretBytes) -> [UInt8] {
        Digest.hmacSHA256(key: fileKey, signed)
    }

    private static func nonce(_ index: UInt64) -> [UInt8] {
        [0, 0, 0, 0] + withUnsafeBytes(of: index.bigEndian) { Array($0) }
    }

    private static func chunkAAD(header: [UInt8], index: UInt64, isFinal: Bool) -> [UInt8] {
        header + withUnsafeBytes(of: index.bigEndian) { Array($0) } + [isFinal ? 1 : 0]
    }
}

/// Why a sealed backup was refused. Says nothing about its contents.
package enum SealedBackupError: Error, Equatable, CustomStringConvertible {
    /// Not a sealed keychaind backup at all (a plain database copy, another file).
    case notSealed
    case unsupportedVersion(UInt8)
    /// Its header check fails under every key tried: sealed under another master key (another
    /// vault, or before a rekey), or the header was changed.
    case foreignKey
    /// A chunk fails authentication: changed, moved or replaced.
    case altered(chunk: Int)
    /// It ends early.
    case truncated
    case io(String)

    package var description: String {
        switch self {
        case .notSealed: "it is not a sealed keychaind backup (no KEYCHAIND-BACKUP header)"
        case .unsupportedVersion(let version): "its format version \(version) is unknown to this keychaind"
        case .foreignKey:
            "it was not sealed under this master key (a backup of another vault, or made before a rekey: "
                + "give the master key of that time with --master-key), or its header was changed"
        case .altered(let chunk): "chunk \(chunk) fails authentication: the backup was changed or damaged"
        case .truncated: "it is truncated (its final chunk is missing)"
        case .io(let reason): "it cannot be read or written: \(reason)"
        }
    }
}

/// A file read or written in order with plain descriptors; closed on release.
private final class BackupFile {
    private let descriptor: Int32
    private let path: String

    init(reading path: String) throws {
        self.path = path
        descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SealedBackupError.io("\(path): \(String(cString: strerror(errno)))") }
    }

    init(creating path: String) throws {
        self.path = path
        descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw SealedBackupError.io("\(path): \(String(cString: strerror(errno)))") }
    }

    deinit { Glibc.close(descriptor) }

    func size() throws -> Int {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw SealedBackupError.io("\(path): \(String(cString: strerror(errno)))") }
        return Int(info.st_size)
    }

    /// The first `count` bytes, from the start of the file (the position is not changed).
    func readPrefix(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let n = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, 0) }
        guard n == count else { throw SealedBackupError.truncated }
        return bytes
    }

    /// Reads exactly `count` bytes into the start of `buffer`.
    func read(into buffer: inout [UInt8], count: Int) throws {
        var done = 0
        try buffer.withUnsafeMutableBytes { raw in
            while done < count {
                let n = Glibc.read(descriptor, raw.baseAddress! + done, count - done)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw SealedBackupError.truncated }
                done += n
            }
        }
    }

    func write(_ bytes: [UInt8]) throws { try bytes.withUnsafeBytes { try write($0) } }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw SealedBackupError.io("\(path): \(String(cString: strerror(errno)))") }
            done += n
        }
    }

    func sync() throws {
        guard fsync(descriptor) == 0 else { throw SealedBackupError.io("\(path): \(String(cString: strerror(errno)))") }
    }
}
