import Synchronization
import Foundation
import KeychainConcurrency
import KeychainCore

/// `ClientStore` over the `clients` table. Lookups go through the UNIQUE index on the token
/// hash; the fetched hash is then compared in constant time.
public final class SQLiteClientStore: ClientStore {
    let pool: ConnectionPool

    /// Clients already looked up by token hash, so that authenticating a request costs a
    /// dictionary lookup instead of a query. One per request thread (a shared one cost every
    /// request a contended lock and reference counts: docs/benchmarks.md, "Token fetch: session
    /// 9"). Every change to the clients table bumps `changes`, and a cache of an older
    /// generation empties itself before it answers; a lookup that raced with a change does not
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
            try pool.write { db in
                try db.execute(
                    "INSERT INTO clients (name, access_groups, role, created, token_hash) VALUES (?, ?, ?, ?, ?)",
                    [.text(client.name), .text(try Self.encode(client.accessGroups)), .text(client.role.rawValue),
                     .integer(client.createdAt.millisecondsSince1970), .blob(tokenHash)])
            }
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
            let rows = try pool.read { db in
                try db.query(
                    "SELECT name, access_groups, role, created, token_hash FROM clients WHERE token_hash = ?",
                    [.blob(tokenHash)]
                ) { row in (try Self.client(from: row), row.blob(4)) }
            }
            guard let (client, stored) = rows.first, constantTimeEqual(stored, tokenHash) else { return nil }
            return client
        }
    }

    public func clients() throws -> [Client] {
        try StoreErrors.map {
            try pool.read { db in
                try db.query("SELECT name, access_groups, role, created FROM clients ORDER BY name") {
                    try Self.client(from: $0)
                }
            }
        }
    }

    public func removeClient(named name: String) throws -> Bool {
        try changing { try StoreErrors.map {
            try pool.write { db in try db.execute("DELETE FROM clients WHERE name = ?", [.text(name)]) > 0 }
        } }
    }

    public func replaceToken(ofClient name: String, tokenHash: [UInt8]) throws -> Bool {
        try changing { try StoreErrors.map {
            try pool.write { db in
                try db.execute("UPDATE clients SET token_hash = ? WHERE name = ?", [.blob(tokenHash), .text(name)]) > 0
            }
        } }
    }

    private static func encode(_ groups: [String]) throws -> String {
        String(decoding: try JSONEncoder().encode(groups), as: UTF8.self)
    }

    private static func client(from row: SQLiteStatement) throws -> Client {
        guard let groups = try? JSONDecoder().decode([String].self, from: Data(row.text(1).utf8)),
            let role = Client.Role(rawValue: row.text(2))
        else { throw KeychainError.decode("a stored client record is malformed") }
        return Client(name: row.text(0), accessGroups: groups, role: role, createdAt: Date(millisecondsSince1970: row.int64(3)))
    }
}
