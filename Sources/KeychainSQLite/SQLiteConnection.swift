internal import CSQLite
import KeychainStore

/// One SQLite connection: owns the `sqlite3*` (closed in `deinit` or by `close()`) and a cache of
/// prepared statements keyed by SQL, and one of finds' statements keyed by their `FindShape`.
///
/// `@unchecked Sendable`: the connection is opened with `SQLITE_OPEN_NOMUTEX`, so it must never be
/// used by two threads at once. `ConnectionPool` guarantees that: the writer is only touched
/// inside its `Mutex`, and a reader is owned by exactly one borrower between checkout and return.
/// Handing the reference across threads in between is safe because the borrow is exclusive.
final class SQLiteConnection: @unchecked Sendable {
    private var db: OpaquePointer?
    private var cache: [String: SQLiteStatement] = [:]
    private var finds: [FindShape: SQLiteStatement] = [:]
    /// The write generation (`ConnectionPool.writeGeneration`) at which this reader's open read
    /// transaction began, while one is kept between reads (`holdSnapshot(at:)`); nil otherwise.
    private var snapshotGeneration: UInt64?
    /// Frames in the WAL after this connection's last commit, once `deferCheckpoints()` took
    /// checkpointing out of the commits.
    private var walFrames: Int32 = 0
    /// The keyring's encryption counts recorded in the open `Keyring.transaction(on:)`, by term;
    /// nil outside one (`recordEncryptions`).
    var pendingEncryptions: [UInt32: UInt64]?
    let path: String

    /// Opens (creating if needed) the database at `path` (`:memory:` for a private in-memory one)
    /// with WAL (or, with `wal: false`, a rollback journal: a self-contained single file, as
    /// backups are), synchronous=FULL, a busy timeout, foreign keys on and a page cache of
    /// `pageCacheKiB`.
    init(
        path: String, busyTimeoutMilliseconds: Int32 = 5000, wal: Bool = true,
        pageCacheKiB: Int = 8 << 10
    ) throws {
        self.path = path
        _ = Self.libraryConfigured
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let error = SQLiteError(code: code, db: handle)
            sqlite3_close_v2(handle)  // closes even when opening failed (GRDB does the same)
            throw error
        }
        db = handle
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        sqlite3_create_collation_v2(
            handle, SQLiteConnection.caseInsensitiveCollation, SQLITE_UTF8, nil, compareIgnoringCase, nil)
        do {
            if path != ":memory:" {
                let wanted = wal ? "wal" : "delete"
                let mode = try scalarText("PRAGMA journal_mode=\(wanted)")
                guard mode?.lowercased() == wanted else {
                    throw SQLiteError(code: SQLITE_ERROR, message: "could not switch to \(wanted) (got \(mode ?? "nil"))")
                }
            }
            try execute("PRAGMA synchronous=FULL")
            try execute("PRAGMA foreign_keys=ON")
            // No function with side effects runs from SQL stored in the schema (triggers, views,
            // CHECK, DEFAULT, index expressions): the database file is not trusted.
            try execute("PRAGMA trusted_schema=OFF")
            // No memory-mapped I/O: mapped pages count in the server's resident memory (300 MB at
            // 1M items with a 256 MiB map, 63 MB without; docs/decisions.md, "Page cache: one
            // budget per pool").
            try execute("PRAGMA cache_size=-\(max(pageCacheKiB, 1))")
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Process-wide SQLite settings, applied once before the first connection opens (SQLite
    /// refuses them once initialised): no memory statistics, so allocations take no global mutex.
    /// Only this module opens connections, so nothing can initialise SQLite before this runs.
    private static let libraryConfigured: Void = {
        let code = CSQLite_disable_memory_statistics()
        precondition(code == SQLITE_OK, "sqlite3_config(SQLITE_CONFIG_MEMSTATUS) failed: \(code)")
    }()

    /// The collation `caseInsensitive` queries use: Unicode case folding as Swift's
    /// `lowercased()` does it, so the SQLite store matches exactly what `ItemFilter.matches` (the
    /// in-memory reference) matches. SQLite's own NOCASE folds ASCII letters only.
    static let caseInsensitiveCollation = "KEYCHAIN_NOCASE"

    var isOpen: Bool { db != nil }

    /// Finalizes cached statements and closes the handle; idempotent.
    func close() {
        cache.removeAll()
        finds.removeAll()
        if let db { sqlite3_close_v2(db) }
        db = nil
    }

    private func handle() throws -> OpaquePointer {
        guard let db else { throw SQLiteError(code: SQLITE_MISUSE, message: "connection is closed") }
        return db
    }

    /// A cached prepared statement for `sql`.
    func statement(_ sql: String) throws -> SQLiteStatement {
        if let cached = cache[sql] { return cached }
        let statement = try SQLiteStatement(db: handle(), sql: sql)
        cache[sql] = statement
        return statement
    }

    /// The cached prepared statement of finds of `shape`, prepared from `shape.sql` the first time.
    func statement(for shape: FindShape) throws -> SQLiteStatement {
        if let cached = finds[shape] { return cached }
        let statement = try SQLiteStatement(db: handle(), sql: shape.sql)
        finds[shape] = statement
        return statement
    }

    /// How many find statements this connection keeps (one per shape it has run).
    var preparedFindCount: Int { finds.count }

    /// Runs `sql` with `values`, ignoring rows; returns the number of rows changed.
    @discardableResult
    func execute(_ sql: String, _ values: [SQLiteValue] = []) throws -> Int {
        let statement = try statement(sql)
        try statement.bind(values)
        defer { statement.reset() }
        while try statement.step() {}
        return Int(sqlite3_changes(try handle()))
    }

    /// Runs several `;`-separated statements without parameters (schema scripts), uncached.
    func executeScript(_ sql: String) throws {
        let db = try handle()
        let code = sqlite3_exec(db, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw SQLiteError(code: sqlite3_extended_errcode(db), db: db, sql: sql) }
    }

    /// Runs `sql` and maps every row.
    func query<T>(_ sql: String, _ values: [SQLiteValue] = [], row: (SQLiteStatement) throws -> T) throws -> [T] {
        try rows(of: statement(sql), values, row: row)
    }

    /// Runs the find statement of `shape` and maps every row.
    func query<T>(_ shape: FindShape, _ values: [SQLiteValue], row: (SQLiteStatement) throws -> T) throws -> [T] {
        try rows(of: statement(for: shape), values, row: row)
    }

    /// Runs the find statement of `shape` and maps rows until `isLast` says the row just mapped is
    /// the last one wanted.
    func query<T>(
        _ shape: FindShape, _ values: [SQLiteValue], row: (SQLiteStatement) throws -> T, until isLast: (T) -> Bool
    ) throws -> [T] {
        let statement = try statement(for: shape)
        try statement.bind(values)
        defer { statement.reset() }
        var rows: [T] = []
        while try statement.step() {
            rows.append(try row(statement))
            if isLast(rows[rows.count - 1]) { break }
        }
        return rows
    }

    private func rows<T>(of statement: SQLiteStatement, _ values: [SQLiteValue], row: (SQLiteStatement) throws -> T)
        throws -> [T]
    {
        try statement.bind(values)
        defer { statement.reset() }
        var rows: [T] = []
        while try statement.step() { rows.append(try row(statement)) }
        return rows
    }

    /// The first column of the first row as text, or nil.
    func scalarText(_ sql: String, _ values: [SQLiteValue] = []) throws -> String? {
        try query(sql, values) { $0.isNull(0) ? nil : $0.text(0) }.first ?? nil
    }

    func scalarInt(_ sql: String, _ values: [SQLiteValue] = []) throws -> Int64? {
        try query(sql, values) { $0.isNull(0) ? nil : $0.int64(0) }.first ?? nil
    }

    var changes: Int { db.map { Int(sqlite3_changes($0)) } ?? 0 }

    /// The `seq` (rowid) of the row the last successful INSERT on this connection added.
    var lastInsertedRow: Int64 { db.map { sqlite3_last_insert_rowid($0) } ?? 0 }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` in a savepoint of the open transaction: when `body` throws, rolls back to the
    /// savepoint (what `body` wrote is undone, the transaction goes on) and returns its error; nil
    /// when it succeeded. Throws only when the savepoint itself fails: the transaction's state is
    /// then unknown, and the caller must roll it back.
    func savepoint(_ body: () throws -> Void) throws -> (any Error)? {
        try execute("SAVEPOINT write")
        do {
            try body()
        } catch {
            try execute("ROLLBACK TO write")
            try execute("RELEASE write")
            return error
        }
        try execute("RELEASE write")
        return nil
    }

    /// Copies this connection's main database into a new file at `path` with SQLite's online
    /// backup API, in one `sqlite3_backup_step(-1)`: one read transaction, so the copy is one
    /// consistent snapshot while writers on other connections go on (WAL). The copy uses a
    /// rollback journal (one self-contained file, no -wal beside it). `path` must not exist.
    func backup(into path: String) throws {
        let source = try handle()
        var destination: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let opened = sqlite3_open_v2(path, &destination, flags, nil)
        defer { sqlite3_close_v2(destination) }
        guard opened == SQLITE_OK, let destination else { throw SQLiteError(code: opened, db: destination) }
        guard let backup = sqlite3_backup_init(destination, "main", source, "main") else {
            throw SQLiteError(code: sqlite3_extended_errcode(destination), db: destination)
        }
        var code: Int32
        var attempts = 0
        repeat {
            code = sqlite3_backup_step(backup, -1)
            if code == SQLITE_BUSY || code == SQLITE_LOCKED {
                attempts += 1
                sqlite3_sleep(10)
            }
        } while (code == SQLITE_BUSY || code == SQLITE_LOCKED) && attempts < 500
        let finished = sqlite3_backup_finish(backup)
        guard code == SQLITE_DONE else { throw SQLiteError(code: code, message: "backup step failed") }
        guard finished == SQLITE_OK else { throw SQLiteError(code: finished, db: destination) }
        let switched = sqlite3_exec(destination, "PRAGMA journal_mode=DELETE", nil, nil, nil)
        guard switched == SQLITE_OK else { throw SQLiteError(code: switched, db: destination) }
    }

    /// Runs `body` inside a read transaction (`BEGIN DEFERRED`), so several selects see one
    /// snapshot; inside a transaction already open (a reader's kept snapshot), that one.
    func read<T>(_ body: () throws -> T) throws -> T {
        if sqlite3_get_autocommit(try handle()) == 0 { return try body() }
        try execute("BEGIN")
        defer { _ = try? execute("COMMIT") }
        return try body()
    }
}

// MARK: - Snapshots kept between reads

extension SQLiteConnection {
    /// Makes sure a read transaction begun at write generation `generation` is open, beginning
    /// one (and ending an older one) if not. `BEGIN` takes no snapshot by itself: the first
    /// select after it does, so the snapshot holds at least every write counted in `generation`.
    /// A reader that keeps it skips, per read, the WAL read lock (`fcntl`), the database file's
    /// size (`fstat`) and SQLite's checks that its page cache is still valid.
    func holdSnapshot(at generation: UInt64) throws {
        let db = try handle()
        if snapshotGeneration == generation, sqlite3_get_autocommit(db) == 0 { return }
        releaseSnapshot()
        try execute("BEGIN")
        snapshotGeneration = generation
    }

    /// Ends the read transaction `holdSnapshot(at:)` kept, if one is open.
    func releaseSnapshot() {
        guard snapshotGeneration != nil else { return }
        snapshotGeneration = nil
        if let db, sqlite3_get_autocommit(db) == 0, (try? execute("COMMIT")) == nil {
            _ = try? execute("ROLLBACK")
        }
    }

    /// The WAL frame count SQLite checkpoints at on its own (`wal_autocheckpoint`'s default).
    static let checkpointFrames: Int32 = 1000

    /// Takes checkpoints out of this (the writer's) commits. SQLite's automatic checkpoint runs
    /// inside the commit that takes the WAL past `checkpointFrames`, while readers may still hold
    /// snapshots from before it, which it cannot pass; `ConnectionPool.write` instead runs
    /// `checkpointIfDue()` once idle readers let theirs go.
    func deferCheckpoints() {
        guard let db else { return }
        sqlite3_wal_hook(
            db,
            { context, _, _, frames in
                Unmanaged<SQLiteConnection>.fromOpaque(context!).takeUnretainedValue().walFrames = frames
                return SQLITE_OK
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// A passive checkpoint (copies what no reader still needs from the WAL into the database,
    /// never waiting) when the WAL holds `checkpointFrames` frames or more. Like SQLite's own, a
    /// checkpoint that cannot finish is left to the next write.
    func checkpointIfDue() {
        guard let db, walFrames >= Self.checkpointFrames else { return }
        walFrames = 0
        sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
    }
}

/// `KEYCHAIN_NOCASE`: compares two UTF-8 texts after `lowercased()`, ordering them consistently.
private let compareIgnoringCase: @convention(c) (
    UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?
) -> Int32 = { _, leftLength, left, rightLength, right in
    func text(_ pointer: UnsafeRawPointer?, _ length: Int32) -> String {
        guard let pointer, length > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: Int(length)), as: UTF8.self)
    }
    let a = text(left, leftLength).lowercased()
    let b = text(right, rightLength).lowercased()
    return a == b ? 0 : (a < b ? -1 : 1)
}
