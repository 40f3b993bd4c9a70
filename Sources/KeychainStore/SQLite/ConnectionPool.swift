import KeychainCore
import Synchronization

/// The connections to one database file: one writer behind a `Mutex` (SQLite allows one writer
/// at a time anyway; serializing in-process avoids busy waits) and a small pool of reader
/// connections that WAL lets run next to the writer. Readers are opened on demand and kept up
/// to `maxIdleReaders`; each is used by one thread at a time (checked out, used, returned).
///
/// With `maxIdleReaders == 0` (and always for `:memory:`, whose connections would each see a
/// different database) every read goes through the writer's `Mutex` too.
final class ConnectionPool: Sendable {
    private struct Readers {
        var idle: [SQLiteConnection] = []
        var closed = false
    }

    let path: String
    private let maxIdleReaders: Int
    private let writer: PThreadLocked<SQLiteConnection?>
    private let readers = PThreadLocked(Readers())
    private let writes = Atomic<UInt64>(0)

    init(path: String, maxIdleReaders: Int = 4) throws {
        self.path = path
        self.maxIdleReaders = path == ":memory:" ? 0 : maxIdleReaders
        writer = PThreadLocked(try SQLiteConnection(path: path))
    }

    /// Runs `body` with the writer connection, serialized with every other write.
    func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try writer.withLock { connection in
            guard let connection, connection.isOpen else { throw KeychainStoreClosed() }
            // Counted once `body` is over (committed or not), before the caller hears of it.
            defer { writes.add(1, ordering: .releasing) }
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
        let connection = try borrowed ?? SQLiteConnection(path: path)
        defer {
            let keep = readers.withLock { state -> Bool in
                guard !state.closed, state.idle.count < maxIdleReaders else { return false }
                state.idle.append(connection)
                return true
            }
            if !keep { connection.close() }
        }
        return try body(connection)
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
