internal import CSQLite
import KeychainCore
import KeychainStore

/// A prepared statement. Owns its `sqlite3_stmt` and finalizes it in `deinit`. Not Sendable: it
/// belongs to its connection, which is used by one thread at a time.
final class SQLiteStatement {
    let handle: OpaquePointer
    let sql: String
    private let db: OpaquePointer

    init(db: OpaquePointer, sql: String) throws {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw SQLiteError(code: code, db: db, sql: sql)
        }
        self.handle = statement
        self.db = db
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and binds `values` to its parameters, 1-based in order.
    func bind(_ values: [SQLiteValue]) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    func bind(_ value: SQLiteValue, at index: Int32) throws {
        let code: Int32
        switch value {
        case .null:
            code = sqlite3_bind_null(handle, index)
        case .integer(let number):
            code = sqlite3_bind_int64(handle, index, number)
        case .text(let string):
            // With its byte length, not -1: text may hold U+0000 (JSON "\u0000"), which a
            // NUL-terminated bind would cut off, storing a different value than was given.
            code = string.withUTF8Bytes { utf8 in
                utf8.withMemoryRebound(to: CChar.self) { chars in
                    // A NULL pointer would bind SQL NULL: "" is bound as a real empty text.
                    guard let base = chars.baseAddress, !chars.isEmpty else {
                        return sqlite3_bind_text(handle, index, "", 0, CSQLite_transient())
                    }
                    return sqlite3_bind_text(handle, index, base, Int32(chars.count), CSQLite_transient())
                }
            }
        case .blob(let bytes):
            if bytes.isEmpty {
                // A zero-length blob bound with a NULL pointer would be SQL NULL.
                code = sqlite3_bind_zeroblob(handle, index, 0)
            } else {
                code = bytes.withUnsafeBytes {
                    sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), CSQLite_transient())
                }
            }
        }
        guard code == SQLITE_OK else { throw SQLiteError(code: code, db: db, sql: sql) }
    }

    /// Steps once: true when a row is available, false when done.
    @discardableResult
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = SQLiteError(code: sqlite3_extended_errcode(db), db: db, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Resets and clears bindings (so no bound value lingers in the cache).
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Columns (0-based)

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func value(_ column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_NULL: return .null
        case SQLITE_INTEGER: return .integer(int64(column))
        case SQLITE_TEXT: return .text(text(column))
        case SQLITE_FLOAT: return .integer(Int64(saturating: sqlite3_column_double(handle, column)))
        default: return .blob(blob(column))
        }
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    /// The integer in `column`, nil for NULL.
    func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }

    /// The text in `column`, nil for NULL.
    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}
