import KeychainConcurrency
import KeychainCore
import KeychainStore

/// The rows of recent finds, as the database gave them: attributes, and secrets still **sealed**
/// (each answer opens them again, so no plaintext is kept here; the same ciphertext sits in
/// SQLite's page cache anyway). A token fetch or item read repeated between writes skips the
/// statement, the B-tree walk and the decoding of the row (docs/benchmarks.md).
///
/// Valid for one write generation of the `ConnectionPool`: an entry is stored only when no write
/// finished while it was being read, and served only while no write has finished since, so an
/// acknowledged write is never followed by an answer from before it. Bounded in entries and in
/// bytes (items and secrets may be up to the body limit, 1 MiB, each): finds of more than `maxRows`
/// rows or of more than 1/16 of `maxBytes` are not kept, and the cache starts over when it holds
/// `maxEntries` entries or would pass `maxBytes`.
///
/// Kept from the second time a find misses, not the first (a `Doorkeeper` of 4 × `maxEntries`
/// slots): reads spread over a large vault (1M items read at random) then stop filling the cache
/// with finds that never come back and starting it over every `maxEntries` misses, while a
/// repeated find (a service's token fetch) is kept from its second read on.
///
/// Each request thread has its own (`SQLiteItemStore` keeps them `PerThread`), so the bounds
/// below are per thread; the lock is then taken by one thread only.
final class FindCache: Sendable {
    /// What a find asked for. Hashed once, when made (before the cache's lock is taken: hashing
    /// the filter's strings is most of a lookup); equality still compares every field.
    struct Key: Hashable, Sendable {
        let filter: ItemFilter
        let limit: Int?
        let after: ItemCursor?
        let contents: ItemContents
        /// The page's byte bound (`ItemOperations.find`'s `maxBytes`).
        let maxBytes: Int?
        /// The key's hash, worked out once (`hash(into:)` combines only this).
        let precomputedHash: Int

        init(filter: ItemFilter, limit: Int?, after: ItemCursor?, contents: ItemContents, maxBytes: Int? = nil) {
            self.filter = filter
            self.limit = limit
            self.after = after
            self.contents = contents
            self.maxBytes = maxBytes
            var hasher = Hasher()
            hasher.combine(filter)
            hasher.combine(limit)
            hasher.combine(after)
            hasher.combine(contents)
            hasher.combine(maxBytes)
            precomputedHash = hasher.finalize()
        }

        func hash(into hasher: inout Hasher) { hasher.combine(precomputedHash) }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.precomputedHash == rhs.precomputedHash && lhs.limit == rhs.limit && lhs.after == rhs.after
                && lhs.contents == rhs.contents && lhs.maxBytes == rhs.maxBytes && lhs.filter == rhs.filter
        }
    }

    private struct Entries {
        var generation: UInt64 = 0
        var rows: [Key: [FoundRow]] = [:]
        /// `size(of:)` summed over `rows`.
        var bytes = 0
        var doorkeeper: Doorkeeper
    }

    private let entries: PThreadLocked<Entries>
    let maxEntries: Int
    let maxRows: Int
    let maxBytes: Int

    init(maxEntries: Int = 1024, maxRows: Int = 8, maxBytes: Int = 8 << 20) {
        self.maxEntries = maxEntries
        self.maxRows = maxRows
        self.maxBytes = maxBytes
        entries = PThreadLocked(Entries(doorkeeper: Doorkeeper(slots: 4 * maxEntries)))
    }

    /// About how much memory `rows` hold: secrets, attribute values and a fixed part per row.
    static func size(of rows: [FoundRow]) -> Int {
        rows.reduce(0) { total, row in total + row.size }
    }

    /// The cached rows for `key`, or `read()`'s, kept when `generation` did not move meanwhile.
    func rows(for key: Key, generation: () -> UInt64, read: () throws -> [FoundRow]) rethrows -> [FoundRow] {
        let before = generation()
        // Entries dropped are released after the lock is let go (freeing a full cache takes a while).
        var stale: [Key: [FoundRow]] = [:]
        let cached = entries.withLock { entries -> [FoundRow]? in
            guard entries.generation == before else {
                entries.generation = before
                swap(&stale, &entries.rows)
                entries.bytes = 0
                return nil
            }
            return entries.rows[key]
        }
        if let cached { return cached }
        let rows = try read()
        guard rows.count <= maxRows, generation() == before else { return rows }
        let size = Self.size(of: rows)
        guard size <= maxBytes / 16 else { return rows }
        var full: [Key: [FoundRow]] = [:]
        entries.withLock { entries in
            guard entries.generation == before, entries.rows[key] == nil else { return }
            guard entries.doorkeeper.admits(key.precomputedHash) else { return }
            if entries.rows.count >= maxEntries || entries.bytes + size > maxBytes {
                swap(&full, &entries.rows)
                entries.bytes = 0
            }
            entries.rows[key] = rows
            entries.bytes += size
        }
        return rows
    }
}
