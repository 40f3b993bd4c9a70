package import KeychainCore

/// What a KV version's row stores of its data after `KVOperations.kvPutVersion`, the same on
/// every backend: nothing once destroyed; the data given, sealed; else (nil data) what the kept
/// row stores, and errSecParam for a new version.
package enum KVVersionData {
    /// The sealed data and the plaintext bytes it counts for, given what the row stored before
    /// (nil: no such version yet); `seal` seals the data bound to the version's row.
    package static func toStore(
        _ version: KVVersion, of key: KVSecretKey, replacing stored: (box: [UInt8]?, bytes: Int64)?,
        seal: (SecretBytes, SealBinding) throws -> [UInt8]
    ) throws -> (box: [UInt8]?, bytes: Int64) {
        if version.destroyed { return (nil, 0) }
        if let data = version.data { return (try seal(data, .kvVersion(key, number: version.number)), Int64(data.count)) }
        guard let stored else { throw KeychainError.param("KV secret \(key): a new version \(version.number) needs its data") }
        return stored
    }
}
