import KeychainCore

/// The rows of recent finds, as the database gave them: attributes, and secrets still **sealed**
/// (each answer opens them again, so no plaintext is kept here; the same ciphertext sits in
/// SQLite's page cache anyway). A token fetch or item read repeated between writes skips the SQL
/// text, the statement, the B-tree walk and the decoding of 47 columns (docs/benchmarks.md).
///
/// Valid for one write generation of the `ConnectionPool`: an entry is stored only when no write
/// finished while it was being read, and served only while no write has finished since, so an
/// acknowledged write is never followed by an answer from before it. Bounded: finds of more than
/// `maxRows` rows are not kept, and the cache starts over when it holds `maxEntries`.
final class FindCache: Sendable {
    struct Key: Hashable, Sendable {
        let filter: ItemFilter
        let limit: Int?
        let after: ItemCursor?
        let includeSecrets: Bool
    }

    struct Row: Sendable {
        let seq: Int64
        let item: Item
        let sealedSecret: [UInt8]?
    }

    private struct Entries {
        var generation: UInt64 = 0
        var rows: [Key: [Row]] = [:]
    }

    private let entries = PThreadLocked(Entries())
    let maxEntries: Int
    let maxRows: Int

    init(maxEntries: Int = 1024, maxRows: Int = 8) {
        self.maxEntries = maxEntries
        self.maxRows = maxRows
    }

    /// The cached rows for `key`, or `read()`'s, kept when `generation` did not move meanwhile.
    func rows(for key: Key, generation: () -> UInt64, read: () throws -> [Row]) rethrows -> [Row] {
        let before = generation()
        // Entries dropped are released after the lock is let go (freeing a full cache takes a while).
        var stale: [Key: [Row]] = [:]
        let cached = entries.withLock { entries -> [Row]? in
            guard entries.generation == before else {
                entries.generation = before
                swap(&stale, &entries.rows)
                return nil
            }
            return entries.rows[key]
        }
        if let cached { return cached }
        let rows = try read()
        guard rows.count <= maxRows, generation() == before else { return rows }
        var full: [Key: [Row]] = [:]
        entries.withLock { entries in
            guard entries.generation == before else { return }
            if entries.rows.count >= maxEntries { swap(&full, &entries.rows) }
            entries.rows[key] = rows
        }
        return rows
    }
}
