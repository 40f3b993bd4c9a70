import KeychainConcurrency

/// The PostgreSQL connections of a node: one per thread that asks (libmicrohttpd's workers), made
/// on its first use and made again after the server dropped it, so a node recovers by itself when
/// the database comes back. A connection is used by one thread at a time: its slot's lock is
/// uncontended, except when the process ran out of thread-specific keys and every thread shares
/// one slot (`PerThread`), where it serialises them.
final class PGConnections: Sendable {
    private let url: String
    private let slots = PerThread { PThreadLocked<PGConnection?>(nil) }

    /// `url`: a libpq connection string (multi-host strings with `target_session_attrs=read-write`
    /// find the primary).
    init(url: String) { self.url = url }

    /// Runs `body` on the calling thread's connection, connecting first when it has none or lost
    /// it. A connection failure (thrown by connecting or by `body`) drops the connection, so the
    /// next call connects again.
    func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        try slots.current.withLock { slot in
            let connection: PGConnection
            if let current = slot, current.isConnected {
                connection = current
            } else {
                slot = nil
                connection = try PGConnection(url: url)
                slot = connection
            }
            do {
                return try body(connection)
            } catch let error as PostgreSQLError where error.isConnectionFailure || !connection.isConnected {
                slot = nil
                throw error
            }
        }
    }
}
