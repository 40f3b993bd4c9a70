import Foundation
import KeychainCore
import Logging
import KeychainStore

extension ItemLookupMap {
    /// Rows one read of the build lists.
    static let buildChunk = 10_000

    /// Lists every row of the `items` table in `pool`, then marks the map complete: before
    /// returning when the table has at most `inlineLimit` rows, else on a background thread
    /// (finds use the lookup index until it is done).
    func build(from pool: ConnectionPool, inlineUpTo inlineLimit: Int64, logger: Logger) {
        let lastRow: Int64
        do {
            lastRow = try pool.read { try ItemTable.lastSequence(on: $0) }
        } catch {
            logger.warning("the lookup map was not built; finds use the lookup index", metadata: ["error": "\(error)"])
            return
        }
        if lastRow <= inlineLimit { return fill(from: pool, logger: logger) }
        let thread = Thread { [self] in fill(from: pool, logger: logger) }
        thread.name = "keychaind-lookups"
        thread.start()
    }

    /// Lists every row, `buildChunk` rows per read (so that writes go on meanwhile: each lists
    /// its own rows), then marks the map complete.
    private func fill(from pool: ConnectionPool, logger: Logger) {
        let started = ContinuousClock.now
        var after: Int64 = 0
        do {
            while true {
                let rows = try pool.read { db in try ItemTable.lookupKeys(after: after, limit: Self.buildChunk, on: db) }
                add(rows.compactMap { row in row.key.map { Entry(key: $0, seq: row.seq) } })
                guard rows.count == Self.buildChunk, let last = rows.last else { break }
                after = last.seq
            }
        } catch is KeychainStoreClosed {
            return
        } catch {
            logger.warning("the lookup map was not built; finds use the lookup index", metadata: ["error": "\(error)"])
            return
        }
        markComplete()
        logger.notice(
            "lookup map ready",
            metadata: ["items": "\(count)", "ms": "\(Int((ContinuousClock.now - started) / .milliseconds(1)))"])
    }
}
