import KeychainCore
import KeychainStore

/// A failed libpq call: the SQLSTATE the server sent (nil when the connection itself failed),
/// the server's primary message, and the constraint named by a constraint violation.
///
/// The description never includes parameter values (they may be secrets or attribute values):
/// every value is sent as a binary parameter, so the SQL text holds only `$n` placeholders.
struct PostgreSQLError: Error, CustomStringConvertible {
    /// A five-character SQLSTATE code (`23505`), with the classes keychaind acts on named.
    struct SQLState: RawRepresentable, Hashable, Sendable {
        let rawValue: String
        init(rawValue: String) { self.rawValue = rawValue }

        static let uniqueViolation = SQLState(rawValue: "23505")
        static let serializationFailure = SQLState(rawValue: "40001")
        static let deadlockDetected = SQLState(rawValue: "40P01")
        static let diskFull = SQLState(rawValue: "53100")
        static let programLimitExceeded = SQLState(rawValue: "54000")
        static let undefinedTable = SQLState(rawValue: "42P01")

        /// The class: the first two characters (`08` connection exception, `53` insufficient resources).
        var errorClass: String { String(rawValue.prefix(2)) }
    }

    let sqlState: SQLState?
    let message: String
    let constraint: String?

    init(sqlState: SQLState?, message: String, constraint: String? = nil) {
        self.sqlState = sqlState
        self.message = message
        self.constraint = constraint
    }

    /// The connection is gone or was never made: no SQLSTATE, class 08 (connection exception), or
    /// 57P01–57P03 (the server shut down, crashed, or is starting).
    var isConnectionFailure: Bool {
        guard let sqlState else { return true }
        return sqlState.errorClass == "08" || sqlState.rawValue.hasPrefix("57P")
    }

    var description: String {
        var text = "PostgreSQL error"
        if let sqlState { text += " \(sqlState.rawValue)" }
        text += ": \(message)"
        if let constraint { text += " (constraint \(constraint))" }
        return text
    }
}

extension PostgreSQLError: StorageFailure {
    var keychainError: KeychainError {
        if sqlState == .uniqueViolation { return .duplicateItem() }
        if sqlState == .diskFull { return KeychainError(.diskFull, "the database's disk is full") }
        if isConnectionFailure { return KeychainError(.io, "the database is unreachable", temporary: true) }
        return .io("storage failure (PostgreSQL \(sqlState?.rawValue ?? "?"))")
    }
}
