import KeychainConcurrency
public import KeychainCore
import Logging
import KeychainStore

/// `ItemStore` over SQLite (`ItemTable`): finds on the request threads through the read path (a
/// find cache per thread, the lookup map, reader connections), writes as transactions on the
/// writer connection (`SQLiteItemTransaction`). Semantics are those of `InMemoryItemStore`.
public final class SQLiteItemStore: ItemStore {
    let pool: ConnectionPool
    let keyring: Keyring
    /// One find cache per request thread: a shared one cost every hit a contended lock and cache
    /// misses on the rows' reference counts (docs/decisions.md, "Per-thread state").
    private let recentFinds = PerThread { FindCache() }
    /// The same for KV reads (`kvRead`).
    let recentKVReads = PerThread { KVReadCache() }
    /// Each row under its lookup attributes, so that a point read walks one B-tree, not two.
    let lookups = ItemLookupMap()
    /// What each access group may hold, checked by every write before it commits.
    let quota: GroupQuota
    /// The writes waiting for the writer, committed in batches.
    let commits = GroupCommit<BatchedWrite>()

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
            return try FoundRow.page(of: rows, limit: limit, maxBytes: maxBytes, keyring: keyring)
        } }
    }

    /// Runs `body` as one write on the writer, committed in a batch with the writes that arrive
    /// with it (`GroupCommit`; the batch is `commitBatch`): it returns, or throws its own error,
    /// once that batch's commit is over (and so on disk). The body's own errors go back as they
    /// are; the store's become `KeychainError`.
    public func transaction<Result>(_ body: (any ItemOperations) throws -> Result) throws -> Result {
        try withoutActuallyEscaping(body) { body in
            var result: Result?
            var thrownByBody: (any Error)?
            let failure = commits.submit({ transaction in
                do {
                    result = try body(transaction)
                } catch {
                    thrownByBody = error
                    throw error
                }
            }, commit: commitBatch)
            if let failure { throw thrownByBody ?? StoreErrors.keychainError(for: failure) }
            guard let result else { preconditionFailure("a committed write has its result") }
            return result
        }
    }

    /// What the group commit has done since start (batches and their sizes), for metrics.
    public var commitStatistics: CommitStatistics { commits.statistics }

    /// Works while locked too (it reads no secret): metrics keep counting items.
    public func countByClass() throws -> [ItemClass: Int] {
        try StoreErrors.map { try pool.read { db in try ItemTable.countByClass(on: db) } }
    }
}
