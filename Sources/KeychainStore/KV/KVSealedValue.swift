package import KeychainCore

/// A sealed value of the KV tables as stored, for re-encryption: a version's data or a secret's
/// custom metadata, and the row it is bound to.
package struct KVSealedValue {
    package let key: KVSecretKey
    /// The version whose data it is; nil: the secret's custom metadata.
    package let version: Int?
    package let box: [UInt8]

    package init(key: KVSecretKey, version: Int?, box: [UInt8]) {
        self.key = key
        self.version = version
        self.box = box
    }

    package var binding: SealBinding { version.map { .kvVersion(key, number: $0) } ?? .kvCustomMetadata(key) }
}
