import KeychainConcurrency
public import KeychainCore
import KeychainStore

/// The KV reads of a store outside a transaction, on a reader connection (as a find's), under
/// the keys; its writes are each a transaction of their own (`ItemStore`'s defaults).
extension SQLiteItemStore {
    public func kvMetadata(of key: KVSecretKey) throws -> KVMetadata? {
        try read { db in try SQLiteItemTransaction.kvMetadata(of: key, keyring: keyring, on: db) }
    }

    public func kvVersions(of key: KVSecretKey) throws -> [KVVersion] {
        try read { db in try KVTable.versions(of: key, on: db) }
    }

    public func kvVersion(_ number: Int, of key: KVSecretKey) throws -> KVVersion? {
        try read { db in try SQLiteItemTransaction.kvVersion(number, of: key, keyring: keyring, on: db) }
    }

    /// The read of `data/<path>`: one statement, or none when this thread read the same since
    /// the last write (`KVReadCache`); the sealed values are opened for every answer.
    public func kvRead(_ key: KVSecretKey, version number: Int?) throws -> (metadata: KVMetadata, version: KVVersion?)? {
        try StoreErrors.map {
            try keyring.withKeys {
                let cacheKey = KVReadCache.Key(secret: key, version: number)
                let row = try recentKVReads.current.row(for: cacheKey, generation: { pool.writeGeneration }) {
                    try pool.read { db in try KVTable.read(key, version: number, on: db).map { KVReadCache.Row(secret: $0.0, version: $0.1) } }
                }
                guard let row else { return nil }
                let metadata = try keyring.openKVMetadata(
                    row.secret.metadata, sealedCustomMetadata: row.secret.sealedCustomMetadata,
                    customMetadataBytes: row.secret.customMetadataBytes, of: key)
                return (metadata, try row.version.map { try keyring.openKVVersion($0.version, sealedData: $0.sealedData, of: key) })
            }
        }
    }

    public func kvPaths(in group: String, prefix: String) throws -> [String] {
        try read { db in try KVTable.paths(in: group, prefix: prefix, on: db) }
    }

    private func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try StoreErrors.map { try keyring.withKeys { try pool.read(body) } }
    }
}
