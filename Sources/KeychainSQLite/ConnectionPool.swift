import KeychainConcurrency
import KeychainCore
import Synchronization
import KeychainStore

/// The connections to one database file: one writer behind a `Mutex` (SQLite allows one writer
/// at a time anyway; serializing in-process avoids busy waits) and a small pool of reader
/// connections that WAL lets run next to the writer. Readers are opened on demand and kept up
/// to `maxIdleReaders` (keychaind keeps one per worker thread); each is used by one thread at a
/// time (checked out, used, returned).
///
/// With `maxIdleReaders == 0` (and always for `:memory:`, whose connections would each see a
/// different database) every read goes through the writer's `Mutex` too.
///
/// A reader keeps its read transaction (its snapshot) from one read to the next while no write
/// finishes, instead of beginning and ending one per read (docs/decisions.md, "Read snapshots
/// kept between reads"):
/// - a read checks out a connection and keeps its snapshot only if it began at the current
///   `writeGeneration`; otherwise it ends it and begins another. A write is counted before its
///   caller hears of it, so no read after an acknowledged write answers from before it.
/// - a write first ends the snapshots of idle readers, so that they hold back neither the WAL's
///   restart at the write's first frame nor, once the write is counted and they are ended again,
///   the checkpoint the write may be due (which the writer runs then, not inside its commit).
package final class ConnectionPool: Sendable {
    private struct Readers {
        var idle: [SQLiteConnection] = []
        var closed = false
    }

    /// SQLite's page cache, in KiB, for all the pool's connections together: each gets an equal
    /// share, so resident memory does not grow with the readers. A share of 8 MiB (the writer and
    /// four readers) still holds the B-trees' upper levels of a 1M-item vault (docs/decisions.md,
    /// "Page cache: one budget per pool").
    static let defaultPageCacheKiB = 40 << 10

    let path: String
    private let maxIdleReaders: Int
    /// Each connection's share of the page cache budget.
    private let pageCacheKiB: Int
    private let writer: PThreadLocked<SQLiteConnection?>
    private let readers = PThreadLocked(Readers())
    private let writes = Atomic<UInt64>(0)

    init(path: String, maxIdleReaders: Int = 4, pageCacheKiB: Int = ConnectionPool.defaultPageCacheKiB) throws {
        self.path = path
        self.maxIdleReaders = path == ":memory:" ? 0 : maxIdleReaders
        self.pageCacheKiB = max(pageCacheKiB / (self.maxIdleReaders + 1), 1024)
        let writer = try SQLiteConnection(path: path, pageCacheKiB: self.pageCacheKiB)
        if self.maxIdleReaders > 0 { writer.deferCheckpoints() }
        self.writer = PThreadLocked(writer)
    }

    /// Runs `body` with the writer connection, serialized with every other write.
    func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try writer.withLock { connection in
            guard let connection, connection.isOpen else { throw KeychainStoreClosed() }
            releaseIdleSnapshots()
            defer {
                // Counted once `body` is over (committed or not), before the caller hears of it.
                writes.add(1, ordering: .releasing)
                releaseIdleSnapshots()
                connection.checkpointIfDue()
            }
            return try body(connection)
        }
    }

    /// How many `write`s have finished. A value read before a query that still holds after it
    /// means no write finished in between (what `SQLiteItemStore`'s find cache relies on).
    var writeGeneration: UInt64 { writes.load(ordering: .acquiring) }

    /// Runs `body` with a reader connection of its own.
    func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        if maxIdleReaders == 0 { return try write(body) }
        let borrowed: SQLiteConnection? = try readers.withLock { state in
            if state.closed { throw KeychainStoreClosed() }
            return state.idle.popLast()
        }
        let connection = try borrowed ?? SQLiteConnection(path: path, pageCacheKiB: pageCacheKiB)
        defer {
            let keep = readers.withLock { state -> Bool in
                guard !state.closed, state.idle.count < maxIdleReaders else { return false }
                state.idle.append(connection)
                return true
            }
            if !keep { connection.close() }
        }
        do {
            try connection.holdSnapshot(at: writeGeneration)
            return try body(connection)
        } catch {
            connection.releaseSnapshot()
            throw error
        }
    }

    /// Ends the read transactions idle readers keep (under the readers' lock, so none is checked
    /// out meanwhile). A reader checked out during a write comes back with its older snapshot,
    /// which the next read on it replaces and the next write ends.
    private func releaseIdleSnapshots() {
        readers.withLock { state in
            for connection in state.idle { connection.releaseSnapshot() }
        }
    }

    /// Closes every connection; later calls throw `KeychainStoreClosed`. Idempotent.
    func close() {
        let idle = readers.withLock { state -> [SQLiteConnection] in
            state.closed = true
            defer { state.idle.removeAll() }
            return state.idle
        }
        for connection in idle { connection.close() }
        writer.withLock { connection in
            connection?.close()
            connection = nil
        }
    }
}

/// Thrown by a store whose vault was closed.
struct KeychainStoreClosed: Error, CustomStringConvertible {
    var description: String { "the vault is closed" }
}
