import KeychainConcurrency
import KeychainCore

/// The rows of recent KV reads (`SQLiteItemStore.kvRead`), as the database gave them: the
/// custom metadata and the version's data still **sealed** (each answer opens them again, as
/// `FindCache` keeps items' secrets). A KV read repeated between writes skips the statement.
///
/// Valid for one write generation of the `ConnectionPool`, as `FindCache`: a row is kept only
/// when no write finished while it was read, and served only while none has since. Bounded:
/// rows whose sealed values pass `maxRowBytes` are not kept, and the cache starts over at
/// `maxEntries` entries. One per request thread (`PerThread`), so its lock is uncontended.
final class KVReadCache: Sendable {
    struct Key: Hashable, Sendable {
        let secret: KVSecretKey
        let version: Int?
    }

    struct Row: Sendable {
        let secret: KVTable.SecretRow
        let version: KVTable.VersionRow?

        var bytes: Int { secret.sealedCustomMetadata.count + (version?.sealedData?.count ?? 0) }
    }

    private struct Entries {
        var generation: UInt64 = 0
        var rows: [Key: Row] = [:]
    }

    private let entries = PThreadLocked(Entries())
    let maxEntries: Int
    let maxRowBytes: Int

    init(maxEntries: Int = 1024, maxRowBytes: Int = 64 << 10) {
        self.maxEntries = maxEntries
        self.maxRowBytes = maxRowBytes
    }

    /// The cached row for `key`, or `read()`'s, kept when `generation` did not move meanwhile.
    func row(for key: Key, generation: () -> UInt64, read: () throws -> Row?) rethrows -> Row? {
        let before = generation()
        var stale: [Key: Row] = [:]
        let cached = entries.withLock { entries -> Row? in
            guard entries.generation == before else {
                entries.generation = before
                swap(&stale, &entries.rows)
                return nil
            }
            return entries.rows[key]
        }
        if let cached { return cached }
        guard let row = try read() else { return nil }
        guard row.bytes <= maxRowBytes, generation() == before else { return row }
        var full: [Key: Row] = [:]
        entries.withLock { entries in
            guard entries.generation == before else { return }
            if entries.rows.count >= maxEntries { swap(&full, &entries.rows) }
            entries.rows[key] = row
        }
        return row
    }
}
