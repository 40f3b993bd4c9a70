internal import CSQLite
import KeychainCore
import KeychainStore

/// A failed SQLite call: the result code (GRDB style), SQLite's message, and the SQL text.
///
/// The description never includes bound values (they may be secrets or attribute values); the
/// SQL text holds only `?` placeholders because every value is bound.
struct SQLiteError: Error, CustomStringConvertible {
    struct ResultCode: RawRepresentable, Hashable, Sendable {
        let rawValue: Int32
        init(rawValue: Int32) { self.rawValue = rawValue }

        /// The primary result code (the low byte of an extended code).
        var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

        static let error = ResultCode(rawValue: SQLITE_ERROR)
        static let busy = ResultCode(rawValue: SQLITE_BUSY)
        static let locked = ResultCode(rawValue: SQLITE_LOCKED)
        static let nomem = ResultCode(rawValue: SQLITE_NOMEM)
        static let ioerr = ResultCode(rawValue: SQLITE_IOERR)
        static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
        static let full = ResultCode(rawValue: SQLITE_FULL)
        static let cantopen = ResultCode(rawValue: SQLITE_CANTOPEN)
        static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
        static let notadb = ResultCode(rawValue: SQLITE_NOTADB)
        static let misuse = ResultCode(rawValue: SQLITE_MISUSE)

        /// `catch let error as SQLiteError where .constraint ~= error.code` style matching.
        static func ~= (pattern: ResultCode, code: ResultCode) -> Bool {
            pattern == code || pattern == code.primary
        }
    }

    let code: ResultCode
    let message: String
    let sql: String?

    init(code: Int32, message: String, sql: String? = nil) {
        self.code = ResultCode(rawValue: code)
        self.message = message
        self.sql = sql
    }

    /// The error for `code` on `db`, with SQLite's message for the connection.
    init(code: Int32, db: OpaquePointer?, sql: String? = nil) {
        let text = db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
        self.init(code: code, message: text, sql: sql)
    }

    var isUniqueConstraint: Bool {
        // SQLITE_CONSTRAINT_UNIQUE and _PRIMARYKEY are function-like macros Swift cannot import.
        code.rawValue == SQLITE_CONSTRAINT | (8 << 8) || code.rawValue == SQLITE_CONSTRAINT | (6 << 8)
    }

    var description: String {
        var text = "SQLite error \(code.rawValue): \(message)"
        if let sql { text += " — while executing `\(sql)`" }
        return text
    }
}

extension SQLiteError: StorageFailure {
    var keychainError: KeychainError {
        if isUniqueConstraint { return .duplicateItem() }
        if ResultCode.full ~= code { return KeychainError(.diskFull, "the disk is full") }
        if ResultCode.corrupt ~= code || ResultCode.notadb ~= code {
            return .io("the database is damaged (SQLite \(code.rawValue))")
        }
        if ResultCode.busy ~= code || ResultCode.locked ~= code {
            return .io("the database is busy (SQLite \(code.rawValue))")
        }
        return .io("storage failure (SQLite \(code.rawValue): \(message))")
    }
}

extension KeychainStoreClosed: StorageFailure {
    var keychainError: KeychainError { .io("the vault is closed") }
}
