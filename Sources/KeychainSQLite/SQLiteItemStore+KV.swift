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

    public func kvPaths(in group: String, prefix: String) throws -> [String] {
        try read { db in try KVTable.paths(in: group, prefix: prefix, on: db) }
    }

    private func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try StoreErrors.map { try keyring.withKeys { try pool.read(body) } }
    }
}
