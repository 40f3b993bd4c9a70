import KeychainCore
import KeychainStore

/// `ClientStore` over the `clients` table on PostgreSQL (`PGClientTable`), with the same
/// per-thread `ClientCache` as on SQLite. A change made on this node makes it stale at once; a
/// change made on another node does when `PGClusterWatcher` sees the clients' version move (at
/// once when the announcement arrives, within a second when it is lost).
final class PGClientStore: ClientStore {
    private let connections: PGConnections
    let cache = ClientCache()

    init(connections: PGConnections) { self.connections = connections }

    func addClient(_ client: Client, tokenHash: [UInt8]) throws {
        try cache.changing { try StoreErrors.map {
            try connections.withConnection { db in try PGClientTable.insert(client, tokenHash: tokenHash, on: db) }
        } }
    }

    func client(forTokenHash tokenHash: [UInt8]) throws -> Client? {
        try cache.client(forTokenHash: tokenHash) { tokenHash in
            try StoreErrors.map {
                let found = try connections.withConnection { db in try PGClientTable.client(forTokenHash: tokenHash, on: db) }
                guard let (client, stored) = found, constantTimeEqual(stored, tokenHash) else { return nil }
                return client
            }
        }
    }

    func clients() throws -> [Client] {
        try StoreErrors.map { try connections.withConnection { db in try PGClientTable.all(on: db) } }
    }

    func removeClient(named name: String) throws -> Bool {
        try cache.changing { try StoreErrors.map {
            try connections.withConnection { db in try PGClientTable.remove(named: name, on: db) }
        } }
    }

    func replaceToken(ofClient name: String, tokenHash: [UInt8]) throws -> Bool {
        try cache.changing { try StoreErrors.map {
            try connections.withConnection { db in try PGClientTable.replaceTokenHash(ofClient: name, with: tokenHash, on: db) }
        } }
    }
}
