package import KeychainCore

/// Opening what the KV tables store, the same on every backend.
extension Keyring {
    /// A secret's metadata as its row stores it, with the custom metadata opened; a secret whose
    /// custom metadata counts no bytes has none, and no box is opened for it.
    package func openKVMetadata(
        _ metadata: KVMetadata, sealedCustomMetadata: [UInt8], customMetadataBytes: Int64, of key: KVSecretKey
    ) throws -> KVMetadata {
        guard customMetadataBytes > 0 else { return metadata }
        var opened = metadata
        opened.customMetadata = try KVCustomMetadataEncoding.decode(open(sealedCustomMetadata, binding: .kvCustomMetadata(key)))
        return opened
    }

    /// A version as its row stores it, with its data opened (nil once destroyed).
    package func openKVVersion(_ version: KVVersion, sealedData: [UInt8]?, of key: KVSecretKey) throws -> KVVersion {
        var opened = version
        opened.data = try sealedData.map { try open($0, binding: .kvVersion(key, number: version.number)) }
        return opened
    }
}
