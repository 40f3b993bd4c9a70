import KeychainConcurrency
public import KeychainCore
import Logging

/// `ItemStore` over SQLite (`ItemTable`): finds on the request threads through the read path (a
/// find cache per thread, the lookup map, reader connections), writes as transactions on the
/// writer connection (`SQLiteItemTransaction`). Semantics are those of `InMemoryItemStore`.
public final class SQLiteItemStore: ItemStore {
    let pool: ConnectionPool
    let keyring: Keyring
    /// One find cache per request thread: a shared one cost every hit a contended lock and cache
    /// misses on the rows' reference counts (docs/decisions.md, "Per-thread state").
    private let recentFinds = PerThread { FindCache() }
    /// Each row under its lookup attributes, so that a point read walks one B-tree, not two.
    let lookups = ItemLookupMap()
    /// What each access group may hold, checked by every write transaction before it commits.
    let quota: GroupQuota

    /// Builds the lookup map before returning when the vault has at most `inlineLookupBuild` rows,
    /// else on a background thread (finds use the lookup index until it is done).
    init(
        pool: ConnectionPool, keyring: Keyring, logger: Logger, quota: GroupQuota = .unlimited,
        inlineLookupBuild: Int64 = 20_000
    ) {
        self.pool = pool
        self.keyring = keyring
        self.quota = quota
        lookups.build(from: pool, inlineUpTo: inlineLookupBuild, logger: logger)
    }

    public func find(
        _ filter: ItemFilter, limit: Int?, after cursor: ItemCursor?, reading contents: ItemContents, maxBytes: Int?
    ) throws -> ItemPage {
        try StoreErrors.map { try keyring.withKeys {
            let key = FindCache.Key(filter: filter, limit: limit, after: cursor, contents: contents, maxBytes: maxBytes)
            let rows = try recentFinds.current.rows(for: key, generation: { pool.writeGeneration }) {
                try pool.read { db in try ItemReader.rows(for: key, lookups: lookups, on: db) }
            }
            return try ItemReader.page(of: rows, limit: limit, maxBytes: maxBytes, keyring: keyring)
        } }
    }

    /// One SQLite write transaction (`BEGIN IMMEDIATE`) on the writer, under the keys. The find
    /// caches drop what they hold when it ends, committed or not (`ConnectionPool.write` counts
    /// it); the lookup map unlists the rows it deleted or re-keyed once it has committed, before
    /// the next write can reuse their `seq`.
    public func transaction<Result>(_ body: (any ItemOperations) throws -> Result) throws -> Result {
        // The body's own errors go back as they are; the store's become `KeychainError`.
        var thrownByBody: (any Error)?
        do {
            return try StoreErrors.map { try keyring.withKeys {
                try pool.write { db in
                    let transaction = SQLiteItemTransaction(db: db, keyring: keyring, lookups: lookups)
                    let result = try keyring.transaction(on: db) {
                        let result: Result
                        do {
                            result = try body(transaction)
                        } catch {
                            thrownByBody = error
                            throw error
                        }
                        if let failure = transaction.failure { throw failure }
                        try transaction.settleUsage(quota: quota)
                        return result
                    }
                    lookups.remove(transaction.unlisted)
                    return result
                }
            } }
        } catch {
            throw thrownByBody ?? error
        }
    }

    /// Works while locked too (it reads no secret): metrics keep counting items.
    public func countByClass() throws -> [ItemClass: Int] {
        try StoreErrors.map { try pool.read { db in try ItemTable.countByClass(on: db) } }
    }
}
