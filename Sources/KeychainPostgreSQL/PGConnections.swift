import KeychainConcurrency
import KeychainStore

/// How a node connects to PostgreSQL: the libpq connection string and the bounds that keep a
/// request from waiting long on a database that is gone (`storage.postgresql.*`).
public struct PGSettings: Sendable {
    /// A libpq connection string (multi-host strings with `target_session_attrs=read-write`
    /// find the primary).
    public var url: String
    /// How long connecting may take (libpq `connect_timeout`).
    public var connectTimeoutSeconds: Int
    /// How long a statement may run, and sent data stay unacknowledged, before the request
    /// fails with errSecIO (`statement_timeout`, `tcp_user_timeout`).
    public var statementTimeoutSeconds: Int

    /// Where every connection made with these settings counts its statements (metrics).
    let statistics: PGStatistics

    public init(url: String, connectTimeoutSeconds: Int = 5, statementTimeoutSeconds: Int = 10) {
        self.url = url
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.statementTimeoutSeconds = statementTimeoutSeconds
        statistics = PGStatistics()
    }

    /// libpq keywords applied where the connection string sets none.
    var defaults: [(keyword: String, value: String)] {
        [
            ("connect_timeout", "\(max(1, connectTimeoutSeconds))"),
            ("tcp_user_timeout", "\(max(1, statementTimeoutSeconds) * 1000)"),
            ("keepalives_idle", "\(max(1, statementTimeoutSeconds))"),
            ("application_name", "keychaind"),
            ("options", "-c statement_timeout=\(max(1, statementTimeoutSeconds) * 1000)"),
        ]
    }

    /// A new connection, counted in `statistics`; the answer to a statement is waited for at most
    /// the statement timeout and half a second (the server's own `statement_timeout` answers first
    /// when it runs).
    func connect() throws -> PGConnection {
        try PGConnection(
            url: url, defaults: defaults, statistics: statistics,
            answerTimeoutMilliseconds: max(1, statementTimeoutSeconds) * 1000 + 500)
    }
}

/// One connection, made on first use and made again after the server dropped it, so that a
/// node recovers by itself when the database comes back. Serves one caller at a time.
final class PGConnectionSlot: Sendable {
    private let settings: PGSettings
    private let slot = PThreadLocked<PGConnection?>(nil)

    init(settings: PGSettings) { self.settings = settings }

    /// Runs `body` on the connection, connecting first when there is none or it was lost. A
    /// connection failure (thrown by connecting or by `body`) drops the connection, so the next
    /// call connects again.
    func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        try slot.withLock { slot in
            let connection: PGConnection
            if let current = slot, current.isConnected {
                connection = current
            } else {
                slot = nil
                connection = try settings.connect()
                slot = connection
            }
            do {
                return try settings.statistics.using { try body(connection) }
            } catch let error as PostgreSQLError where error.isConnectionFailure || !connection.isConnected {
                slot = nil
                settings.statistics.failedToConnectOrLost()
                throw error
            }
        }
    }

    /// Closes the connection (the next call connects again).
    func drop() { slot.withLock { $0 = nil } }
}

/// The PostgreSQL connections of a node's request threads: one per thread that asks
/// (libmicrohttpd's workers), each a `PGConnectionSlot`. A slot's lock is uncontended, except
/// when the process ran out of thread-specific keys and every thread shares one slot
/// (`PerThread`), where it serialises them.
final class PGConnections: Sendable {
    private let slots: PerThread<PGConnectionSlot>

    init(settings: PGSettings) { slots = PerThread { PGConnectionSlot(settings: settings) } }

    /// `url` with the default bounds.
    convenience init(url: String) { self.init(settings: PGSettings(url: url)) }

    /// Runs `body` on the calling thread's connection (`PGConnectionSlot.withConnection`).
    func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        try slots.current.withConnection(body)
    }
}
