package import KeychainCore

/// How a KV secret's custom metadata is encoded before it is sealed: its pairs in ascending byte
/// order of their keys, each key and value as a UInt32 big-endian length and its UTF-8 bytes. The
/// same metadata always encodes the same, on every backend, with no JSON library in the stores.
package enum KVCustomMetadataEncoding {
    package static func encode(_ metadata: [String: String]) -> SecretBytes {
        var bytes: [UInt8] = []
        defer { SecretBytes.wipe(&bytes) }
        bytes.reserveCapacity(metadata.reduce(0) { $0 + 8 + $1.key.utf8.count + $1.value.utf8.count })
        for (key, value) in metadata.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            for field in [key, value] {
                SealedBox.appendUInt32(UInt32(field.utf8.count), to: &bytes)
                bytes.append(contentsOf: field.utf8)
            }
        }
        return SecretBytes(bytes, lockedInMemory: false)
    }

    /// The metadata `encode` encoded; `KeychainError.decode` for anything else.
    package static func decode(_ encoded: SecretBytes) throws -> [String: String] {
        try encoded.withUnsafeBytes { raw in
            var metadata: [String: String] = [:]
            var offset = 0
            func field() throws -> String {
                guard raw.count - offset >= 4 else { throw malformed }
                let length = raw[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
                offset += 4
                guard raw.count - offset >= length,
                    let text = String(validating: raw[offset..<offset + length], as: UTF8.self)
                else { throw malformed }
                offset += length
                return text
            }
            while offset < raw.count {
                let key = try field()
                metadata[key] = try field()
            }
            return metadata
        }
    }

    private static let malformed = KeychainError.decode("a KV secret's custom metadata is malformed")
}
