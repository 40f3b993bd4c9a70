import Synchronization
import Foundation
import KeychainConcurrency
public import KeychainCore

/// `ClientStore` over the `clients` table (`ClientTable`). Lookups go through the UNIQUE index on
/// the token hash; the fetched hash is then compared in constant time.
public final class SQLiteClientStore: ClientStore {
    let pool: ConnectionPool

    /// Clients already looked up by token hash, so that authenticating a request costs a
    /// dictionary lookup instead of a query. One per request thread (a shared one cost every
    /// request a contended lock and reference counts: docs/decisions.md, "Per-thread state").
    /// Every change to the clients table bumps `changes`, and a cache of an older generation
    /// empties itself before it answers; a lookup that raced with a change does not
    /// cache what it read (its generation is stale), so a revoked token fails from the next
    /// request on, on every thread. Only tokens that exist are cached, so unknown tokens cannot
    /// grow it; it is bounded anyway. The key is a SHA-256 of a 256-bit random token: a timing
    /// difference in the dictionary reveals nothing about a token.
    private struct Cache {
        var clients: [TokenHash: Client] = [:]
        var generation: UInt64 = 0
    }

    /// A token hash as a dictionary key, hashed as one run of bytes (an array of bytes is hashed
    /// byte by byte, which cost more than the rest of the lookup).
    private struct TokenHash: Hashable {
        let bytes: [UInt8]

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    private let caches = PerThread { PThreadLocked(Cache()) }
    /// Changes to the clients table so far.
    private let changes = Atomic<UInt64>(0)
    static let cacheLimit = 10_000

    init(pool: ConnectionPool) { self.pool = pool }

    /// Runs a change to the clients table, then makes every cached lookup stale.
    @discardableResult
    private func changing<T>(_ body: () throws -> T) throws -> T {
        defer { changes.add(1, ordering: .sequentiallyConsistent) }
        return try body()
    }

    public func addClient(_ client: Client, tokenHash: [UInt8]) throws {
        try changing { try StoreErrors.map {
            try pool.write { db in try ClientTable.insert(client, tokenHash: tokenHash, on: db) }
        } }
    }

    public func client(forTokenHash tokenHash: [UInt8]) throws -> Client? {
        let key = TokenHash(bytes: tokenHash)
        let generation = changes.load(ordering: .sequentiallyConsistent)
        let cache = caches.current
        let cached = cache.withLock { cache -> Client? in
            guard cache.generation == generation else {
                cache.clients.removeAll()
                cache.generation = generation
                return nil
            }
            return cache.clients[key]
        }
        if let cached { return cached }
        let client = try lookUp(tokenHash)
        // Only this thread touches its cache, so the generation it was checked at is still its own.
        if let client, changes.load(ordering: .sequentiallyConsistent) == generation {
            cache.withLock { cache in
                if cache.clients.count >= Self.cacheLimit { cache.clients.removeAll() }
                cache.clients[key] = client
            }
        }
        return client
    }

    private func lookUp(_ tokenHash: [UInt8]) throws -> Client? {
        try StoreErrors.map {
            let found = try pool.read { db in try ClientTable.client(forTokenHash: tokenHash, on: db) }
            guard let (client, stored) = found, constantTimeEqual(stored, tokenHash) else { return nil }
            return client
        }
    }

    public func clients() throws -> [Client] {
        try StoreErrors.map {
            try pool.read { db in try ClientTable.all(on: db) }
        }
    }

    public func removeClient(named name: String) throws -> Bool {
        try changing { try StoreErrors.map {
            try pool.write { db in try ClientTable.remove(named: name, on: db) }
        } }
    }

    public func replaceToken(ofClient name: String, tokenHash: [UInt8]) throws -> Bool {
        try changing { try StoreErrors.map {
            try pool.write { db in try ClientTable.replaceTokenHash(ofClient: name, with: tokenHash, on: db) }
        } }
    }
}
