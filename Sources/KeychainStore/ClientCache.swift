import Foundation
import KeychainConcurrency
package import KeychainCore
import Synchronization

/// Token holders already looked up by token hash, so that authenticating a request costs a
/// dictionary lookup instead of a query. One per request thread (a shared one cost every request
/// a contended lock and reference counts: docs/decisions.md, "Per-thread state").
///
/// Two kinds of change reach the caches. A change to the clients (`invalidate()`: one made here,
/// or one another node announced) bumps the generation, and a cache of an older generation
/// empties itself before it answers. A revoked token (`invalidate(tokenHash:)`) goes into a short
/// log of revocations, and each cache drops just those entries before it answers (all of them
/// when it has fallen further behind than the log reaches). A lookup that raced with either does
/// not cache what it read. Renewals and logins change nothing here: an entry whose cached expiry
/// has passed is read again before the token is refused, so a renewal made anywhere holds.
/// Only tokens that exist are cached, so unknown tokens cannot grow it; it is bounded anyway. The
/// key is a SHA-256 of a 256-bit random token: a timing difference in the dictionary reveals
/// nothing about a token.
package final class ClientCache: Sendable {
    private struct Entries {
        var holders: [TokenHash: TokenHolder] = [:]
        var generation: UInt64 = 0
        var revocationsSeen: UInt64 = 0
    }

    /// A token hash as a dictionary key, hashed as one run of bytes (an array of bytes is hashed
    /// byte by byte, which cost more than the rest of the lookup).
    private struct TokenHash: Hashable {
        let bytes: [UInt8]

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    /// The last `revocationMemory` revoked hashes; `count` counts every revocation ever logged.
    private struct RevocationLog {
        var hashes: [TokenHash] = []
        var count: UInt64 = 0
    }

    private let caches = PerThread { PThreadLocked(Entries()) }
    /// Changes to the clients so far.
    private let changes = Atomic<UInt64>(0)
    private let revocations = Mutex(RevocationLog())
    private let revocationCount = Atomic<UInt64>(0)
    package static let limit = 10_000
    static let revocationMemory = 1024

    package init() {}

    /// Makes every cached lookup stale.
    package func invalidate() { changes.add(1, ordering: .sequentiallyConsistent) }

    /// Makes the cached lookups of one token stale, on every thread.
    package func invalidate(tokenHash: [UInt8]) {
        revocations.withLock { log in
            log.hashes.append(TokenHash(bytes: tokenHash))
            if log.hashes.count > Self.revocationMemory { log.hashes.removeFirst(log.hashes.count - Self.revocationMemory) }
            log.count += 1
            revocationCount.store(log.count, ordering: .sequentiallyConsistent)
        }
    }

    /// Runs a change to the clients, then makes every cached lookup stale.
    package func changing<T>(_ body: () throws -> T) rethrows -> T {
        defer { invalidate() }
        return try body()
    }

    /// The cached holder of `tokenHash` while its token has not expired, else what `lookUp`
    /// finds (cached when it is a holder and no change came meanwhile).
    package func holder(forTokenHash tokenHash: [UInt8], lookUp: ([UInt8]) throws -> TokenHolder?) throws -> TokenHolder? {
        let key = TokenHash(bytes: tokenHash)
        let generation = changes.load(ordering: .sequentiallyConsistent)
        let revoked = revocationCount.load(ordering: .sequentiallyConsistent)
        let cache = caches.current
        let cached = cache.withLock { cache -> TokenHolder? in
            if cache.generation != generation {
                cache.holders.removeAll()
                cache.generation = generation
                cache.revocationsSeen = revoked
            } else if cache.revocationsSeen != revoked {
                dropRevoked(from: &cache, upTo: revoked)
            }
            return cache.holders[key]
        }
        // A token that never expires reads no clock.
        if let cached, cached.token.expiresAt.map({ $0 > Date() }) ?? true { return cached }
        let holder = try lookUp(tokenHash)
        // Only this thread touches its cache, so what it was checked at is still its own.
        if changes.load(ordering: .sequentiallyConsistent) == generation,
            revocationCount.load(ordering: .sequentiallyConsistent) == revoked
        {
            cache.withLock { cache in
                if let holder {
                    if cache.holders.count >= Self.limit { cache.holders.removeAll() }
                    cache.holders[key] = holder
                } else {
                    cache.holders[key] = nil
                }
            }
        }
        return holder
    }

    /// Drops the entries of the tokens revoked since `cache` last looked (every entry when the
    /// log no longer reaches back that far).
    private func dropRevoked(from cache: inout Entries, upTo revoked: UInt64) {
        revocations.withLock { log in
            let missed = log.count - cache.revocationsSeen
            if missed > UInt64(log.hashes.count) {
                cache.holders.removeAll()
            } else {
                for hash in log.hashes.suffix(Int(missed)) { cache.holders[hash] = nil }
            }
            cache.revocationsSeen = log.count
        }
    }
}
