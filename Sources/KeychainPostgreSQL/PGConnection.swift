internal import CLibPQ
#if canImport(Glibc)
import Glibc
import KeychainStore
#endif

/// One PostgreSQL connection through libpq: owns the `PGconn` (finished in `deinit`), prepares
/// each statement once (named by the order it was first seen), and sends every parameter and
/// reads every result in binary format.
///
/// Not Sendable: a libpq connection serves one thread at a time, so each worker thread holds its
/// own (docs/decisions.md, "PostgreSQL through libpq"). Nothing above this file sees a pointer.
final class PGConnection {
    private let handle: OpaquePointer
    /// Statement name by SQL text and parameter types (a statement's types are fixed when prepared).
    private var prepared: [PreparedKey: String] = [:]
    /// Where its statements and its life are counted (metrics), when anywhere.
    private let statistics: PGStatistics?

    private struct PreparedKey: Hashable {
        let sql: String
        let types: [Oid]
    }

    /// How long the answer to one statement may take, in milliseconds (nil: no bound). The
    /// server's `statement_timeout` bounds a slow statement, but not a server that does not run
    /// at all (stopped, hung): its kernel still acknowledges what is sent, so no TCP timeout fires
    /// either. Past this bound the connection is given up (`isConnected` false from then on).
    private let answerTimeoutMilliseconds: Int?
    /// Set when an answer did not come in time: the connection is left as it is and not used again.
    private var abandoned = false

    /// Connects with a libpq connection string (`host=… port=… dbname=…` or a `postgresql://` URL),
    /// with `defaults` (libpq keywords such as `connect_timeout`) where the string sets nothing.
    init(
        url: String, defaults: [(keyword: String, value: String)] = [], statistics: PGStatistics? = nil,
        answerTimeoutMilliseconds: Int? = nil
    ) throws {
        self.statistics = statistics
        self.answerTimeoutMilliseconds = answerTimeoutMilliseconds
        // Keywords before `dbname` are overridden by what the expanded connection string sets.
        let pairs = defaults + [(keyword: "dbname", value: url)]
        let keywords = pairs.map { strdup($0.keyword) } + [nil]
        let values = pairs.map { strdup($0.value) } + [nil]
        defer {
            keywords.forEach { free($0) }
            values.forEach { free($0) }
        }
        let connected = keywords.map { UnsafePointer($0) }.withUnsafeBufferPointer { keywordPointers in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { valuePointers in
                PQconnectdbParams(keywordPointers.baseAddress, valuePointers.baseAddress, 1)
            }
        }
        guard let handle = connected else {
            throw PostgreSQLError(sqlState: nil, message: "out of memory")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = Self.message(of: handle)
            PQfinish(handle)
            statistics?.failedToConnectOrLost()
            throw PostgreSQLError(sqlState: nil, message: message)
        }
        statistics?.connected()
        // Notices (`… already exists, skipping`) would go to standard error by default.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        self.handle = handle
    }

    deinit {
        PQfinish(handle)
        statistics?.disconnected()
    }

    /// Whether the connection is still up (false after the server went away). libpq learns that
    /// an idle connection was closed (PostgreSQL restarted) only when it reads from it, so what
    /// the server sent meanwhile (its FATAL message, then the end of the stream, each read
    /// apart) is read first: without that, the next statement on the connection would fail and
    /// its request answer errSecIO with the database back.
    var isConnected: Bool {
        guard !abandoned else { return false }
        for _ in 0..<4 {
            guard PQstatus(handle) == CONNECTION_OK else { return false }
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            guard descriptor.fd >= 0 else { return false }
            guard poll(&descriptor, 1, 0) > 0 else { return true }
            guard PQconsumeInput(handle) == 1 else { return false }
        }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Runs one statement with `values` as `$1…$n` and returns its rows (none for a command).
    @discardableResult
    func execute(_ sql: String, _ values: [PGValue] = []) throws -> PGRows {
        let types = values.map(Self.typeOID)
        let name = try statementName(sql, types: types)
        let run = {
            let sent = ParameterBuffer(values).withParameters { pointers, lengths, formats in
                PQsendQueryPrepared(self.handle, name, Int32(values.count), pointers, lengths, formats, 1)
            }
            return try self.answer(sent)
        }
        return try checked(statistics.map { try $0.timing(run) } ?? run())
    }

    /// Runs a script of statements without parameters (the simple-query protocol, text results
    /// discarded): schema changes.
    func executeScript(_ sql: String) throws {
        let run = { try self.answer(PQsendQuery(self.handle, sql)) }
        _ = try checked(statistics.map { try $0.timing(run) } ?? run())
    }

    /// The result of the statement just sent (`sent`: what the `PQsend…` call returned), as
    /// `PQexec` gives it: the first error, else the last result; nil when the connection failed
    /// (`checked` throws libpq's message). Waits for the answer at most `answerTimeoutMilliseconds`,
    /// then abandons the connection and throws a connection failure (errSecIO).
    private func answer(_ sent: Int32) throws -> OpaquePointer? {
        guard sent == 1 else { return nil }
        let deadline = answerTimeoutMilliseconds.map { ContinuousClock.now + .milliseconds($0) }
        var kept: OpaquePointer?
        while true {
            while PQisBusy(handle) == 1 {
                var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
                var wait: Int32 = -1
                if let deadline {
                    let left = deadline - ContinuousClock.now
                    let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
                    guard milliseconds > 0 else {
                        if let kept { PQclear(kept) }
                        abandoned = true
                        throw PostgreSQLError(
                            sqlState: nil, message: "PostgreSQL did not answer within \(answerTimeoutMilliseconds ?? 0) ms")
                    }
                    wait = Int32(clamping: milliseconds)
                }
                if poll(&descriptor, 1, wait) < 0, errno != EINTR {
                    if let kept { PQclear(kept) }
                    return nil
                }
                guard PQconsumeInput(handle) == 1 else {
                    if let kept { PQclear(kept) }
                    return nil
                }
            }
            guard let result = PQgetResult(handle) else { return kept }
            if let previous = kept, !Self.isSuccess(previous) {
                PQclear(result)
            } else {
                if let previous = kept { PQclear(previous) }
                kept = result
            }
        }
    }

    private static func isSuccess(_ result: OpaquePointer) -> Bool {
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY: true
        default: false
        }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try executeScript("BEGIN")
        do {
            let value = try body()
            try executeScript("COMMIT")
            return value
        } catch {
            if PQtransactionStatus(handle) != PQTRANS_IDLE { _ = try? executeScript("ROLLBACK") }
            throw error
        }
    }

    // MARK: Notifications

    /// The payloads of the notifications received so far (after `LISTEN`), waiting up to
    /// `timeoutMilliseconds` for the first when none is queued. Throws when the connection is lost.
    func notifications(waitingUpTo timeoutMilliseconds: Int32) throws -> [String] {
        var received = drainNotifications()
        if !received.isEmpty { return received }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        guard descriptor.fd >= 0 else { throw PostgreSQLError(sqlState: nil, message: "the connection has no socket") }
        if poll(&descriptor, 1, timeoutMilliseconds) > 0 {
            guard PQconsumeInput(handle) == 1 else {
                throw PostgreSQLError(sqlState: nil, message: Self.message(of: handle))
            }
            received = drainNotifications()
        }
        return received
    }

    private func drainNotifications() -> [String] {
        var payloads: [String] = []
        while let notification = PQnotifies(handle) {
            payloads.append(String(cString: notification.pointee.extra))
            PQfreemem(notification)
        }
        return payloads
    }

    private func statementName(_ sql: String, types: [Oid]) throws -> String {
        let key = PreparedKey(sql: sql, types: types)
        if let name = prepared[key] { return name }
        let name = "s\(prepared.count)"
        let sent = types.withUnsafeBufferPointer { PQsendPrepare(handle, name, sql, Int32(types.count), $0.baseAddress) }
        _ = try checked(try answer(sent))
        prepared[key] = name
        return name
    }

    /// The result as rows, or its error thrown (the result cleared).
    private func checked(_ result: OpaquePointer?) throws -> PGRows {
        guard let result else { throw PostgreSQLError(sqlState: nil, message: Self.message(of: handle)) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return PGRows(result: result)
        default:
            defer { PQclear(result) }
            let field = { (code: Int32) in PQresultErrorField(result, code).map { String(cString: $0) } }
            throw PostgreSQLError(
                sqlState: field(CLibPQ_DIAG_SQLSTATE).map(PostgreSQLError.SQLState.init(rawValue:)),
                message: field(CLibPQ_DIAG_MESSAGE_PRIMARY) ?? Self.message(of: handle),
                constraint: field(CLibPQ_DIAG_CONSTRAINT_NAME))
        }
    }

    private static func message(of handle: OpaquePointer) -> String {
        PQerrorMessage(handle).map { String(cString: $0) }?.trimmingWhitespace ?? "unknown libpq error"
    }

    private static func typeOID(_ value: PGValue) -> Oid {
        switch value {
        case .null: 0  // the server infers it from the statement
        case .int8: CLibPQ_OID_INT8
        case .text: CLibPQ_OID_TEXT
        case .bytea: CLibPQ_OID_BYTEA
        case .bool: CLibPQ_OID_BOOL
        }
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        var view = Substring(self)
        while let last = view.last, last.isWhitespace { view.removeLast() }
        return String(view)
    }
}
