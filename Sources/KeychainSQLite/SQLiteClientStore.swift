public import KeychainCore
import KeychainStore

/// `ClientStore` over the `clients` table (`ClientTable`). Lookups go through the UNIQUE index on
/// the token hash; the fetched hash is then compared in constant time. Found clients are kept in
/// a `ClientCache` that every change here makes stale.
public final class SQLiteClientStore: ClientStore {
    let pool: ConnectionPool
    private let cache = ClientCache()

    init(pool: ConnectionPool) { self.pool = pool }

    public func addClient(_ client: Client, tokenHash: [UInt8]) throws {
        try cache.changing { try StoreErrors.map {
            try pool.write { db in try ClientTable.insert(client, tokenHash: tokenHash, on: db) }
        } }
    }

    public func client(forTokenHash tokenHash: [UInt8]) throws -> Client? {
        try cache.client(forTokenHash: tokenHash) { tokenHash in
            try StoreErrors.map {
                let found = try pool.read { db in try ClientTable.client(forTokenHash: tokenHash, on: db) }
                guard let (client, stored) = found, constantTimeEqual(stored, tokenHash) else { return nil }
                return client
            }
        }
    }

    public func clients() throws -> [Client] {
        try StoreErrors.map {
            try pool.read { db in try ClientTable.all(on: db) }
        }
    }

    public func removeClient(named name: String) throws -> Bool {
        try cache.changing { try StoreErrors.map {
            try pool.write { db in try ClientTable.remove(named: name, on: db) }
        } }
    }

    public func replaceToken(ofClient name: String, tokenHash: [UInt8]) throws -> Bool {
        try cache.changing { try StoreErrors.map {
            try pool.write { db in try ClientTable.replaceTokenHash(ofClient: name, with: tokenHash, on: db) }
        } }
    }
}
