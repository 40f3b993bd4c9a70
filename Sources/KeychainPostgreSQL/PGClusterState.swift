import KeychainStore

/// The state every node of a cluster follows, in the one row of `cluster_state`: whether the
/// vault is locked, and counters bumped by each change to the clients and to the keyring. A
/// change is written in the transaction that makes it and announced on the `keychaind` channel
/// (NOTIFY, sent at commit); nodes read the row again on each announcement and at least once a
/// second (`PGClusterWatcher`), so a lost announcement delays nothing by more than that.
enum PGClusterState {
    static let channel = "keychaind"

    /// A counter of changes other nodes act on.
    enum Counter: String {
        /// Clients added, revoked or given a new token: drop cached clients.
        case clients = "clients_version"
        /// Terms started, retired or re-wrapped: read the keyring again.
        case keyring = "keyring_version"
    }

    struct Snapshot: Equatable, Sendable {
        var locked: Bool
        var clientsVersion: Int64
        var keyringVersion: Int64
    }

    static func read(on db: PGConnection) throws -> Snapshot {
        let rows = try db.execute("SELECT locked, clients_version, keyring_version FROM cluster_state WHERE id = 1")
        guard rows.count == 1 else { throw PostgreSQLError(sqlState: nil, message: "cluster_state has no row") }
        return Snapshot(locked: rows.bool(0, 0), clientsVersion: rows.int64(0, 1), keyringVersion: rows.int64(0, 2))
    }

    /// Bumps `counter` in the caller's transaction and announces it at commit.
    static func bump(_ counter: Counter, on db: PGConnection) throws {
        try db.execute("UPDATE cluster_state SET \(counter.rawValue) = \(counter.rawValue) + 1 WHERE id = 1")
        try announce(counter.rawValue, on: db)
    }

    /// Records the lock state for every node and announces it.
    static func setLocked(_ locked: Bool, on db: PGConnection) throws {
        try db.transaction {
            try db.execute("UPDATE cluster_state SET locked = $1 WHERE id = 1", [.bool(locked)])
            try announce("locked", on: db)
        }
    }

    private static func announce(_ what: String, on db: PGConnection) throws {
        try db.execute("SELECT pg_notify($1, $2)", [.text(channel), .text(what)])
    }
}
