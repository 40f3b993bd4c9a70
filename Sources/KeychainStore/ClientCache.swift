import KeychainConcurrency
package import KeychainCore
import Synchronization

/// Clients already looked up by token hash, so that authenticating a request costs a dictionary
/// lookup instead of a query. One per request thread (a shared one cost every request a contended
/// lock and reference counts: docs/decisions.md, "Per-thread state").
///
/// Every change to the clients bumps the generation (`invalidate()`: a change made here, or one
/// another node announced), and a cache of an older generation empties itself before it answers;
/// a lookup that raced with a change does not cache what it read (its generation is stale), so a
/// revoked token fails from the next request on, on every thread. Only tokens that exist are
/// cached, so unknown tokens cannot grow it; it is bounded anyway. The key is a SHA-256 of a
/// 256-bit random token: a timing difference in the dictionary reveals nothing about a token.
package final class ClientCache: Sendable {
    private struct Entries {
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

    private let caches = PerThread { PThreadLocked(Entries()) }
    /// Changes to the clients so far.
    private let changes = Atomic<UInt64>(0)
    package static let limit = 10_000

    package init() {}

    /// Makes every cached lookup stale.
    package func invalidate() { changes.add(1, ordering: .sequentiallyConsistent) }

    /// Runs a change to the clients, then makes every cached lookup stale.
    package func changing<T>(_ body: () throws -> T) rethrows -> T {
        defer { invalidate() }
        return try body()
    }

    /// The cached client of `tokenHash`, else what `lookUp` finds (cached when it is a client and
    /// no change came meanwhile).
    package func client(forTokenHash tokenHash: [UInt8], lookUp: ([UInt8]) throws -> Client?) throws -> Client? {
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
                if cache.clients.count >= Self.limit { cache.clients.removeAll() }
                cache.clients[key] = client
            }
        }
        return client
    }
}
