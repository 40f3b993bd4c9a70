import KeychainCore
import KeychainStore

/// The KV reads of a store outside a transaction, each one statement on the thread's connection
/// under the keys (no secret's lock: nothing follows them); its writes are each a transaction of
/// their own (`ItemStore`'s defaults).
extension PGItemStore {
    func kvMetadata(of key: KVSecretKey) throws -> KVMetadata? {
        try read { db in try PGItemTransaction.kvMetadata(of: key, keyring: keyring, on: db) }
    }

    func kvVersions(of key: KVSecretKey) throws -> [KVVersion] {
        try read { db in try PGKVTable.versions(of: key, on: db) }
    }

    func kvVersion(_ number: Int, of key: KVSecretKey) throws -> KVVersion? {
        try read { db in try PGItemTransaction.kvVersion(number, of: key, keyring: keyring, on: db) }
    }

    func kvPaths(in group: String, prefix: String) throws -> [String] {
        try read { db in try PGKVTable.paths(in: group, prefix: prefix, on: db) }
    }

    private func read<T>(_ body: (PGConnection) throws -> T) throws -> T {
        try StoreErrors.map { try keyring.withKeys { try connections.withConnection(body) } }
    }
}
