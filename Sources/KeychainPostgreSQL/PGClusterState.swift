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
        /// Tokens revoked one by one so far (`announceRevocation`).
        var tokensVersion: Int64
    }

    /// The prefix of a revocation's announcement: `token:<tokens_version>:<hash in hex>`.
    static let revocationPrefix = "token:"

    static func read(on db: PGConnection) throws -> Snapshot {
        let rows = try db.execute("SELECT locked, clients_version, keyring_version, tokens_version FROM cluster_state WHERE id = 1")
        guard rows.count == 1 else { throw PostgreSQLError(sqlState: nil, message: "cluster_state has no row") }
        return Snapshot(
            locked: rows.bool(0, 0), clientsVersion: rows.int64(0, 1), keyringVersion: rows.int64(0, 2),
            tokensVersion: rows.int64(0, 3))
    }

    /// The vault's cluster id (migration 7), the same for every node.
    static func clusterID(on db: PGConnection) throws -> String {
        let rows = try db.execute("SELECT cluster_id FROM cluster_state WHERE id = 1")
        guard rows.count == 1 else { throw PostgreSQLError(sqlState: nil, message: "cluster_state has no row") }
        return rows.text(0, 0)
    }

    /// Bumps `counter` in the caller's transaction and announces it at commit.
    static func bump(_ counter: Counter, on db: PGConnection) throws {
        try db.execute("UPDATE cluster_state SET \(counter.rawValue) = \(counter.rawValue) + 1 WHERE id = 1")
        try announce(counter.rawValue, on: db)
    }

    /// Counts a revoked token in the caller's transaction and announces its hash at commit, so
    /// that other nodes drop that token's cached entry alone. A node that misses the
    /// announcement sees the count move without it and drops every cached entry instead.
    static func announceRevocation(of tokenHash: [UInt8], on db: PGConnection) throws {
        let version = try db.execute("UPDATE cluster_state SET tokens_version = tokens_version + 1 WHERE id = 1 RETURNING tokens_version")
            .int64(0, 0)
        try announce("\(revocationPrefix)\(version):\(hex(tokenHash))", on: db)
    }

    /// A revocation's announcement: its count and the token's hash; nil for any other payload.
    static func revocation(in payload: String) -> (version: Int64, tokenHash: [UInt8])? {
        guard payload.hasPrefix(revocationPrefix) else { return nil }
        let parts = payload.dropFirst(revocationPrefix.count).split(separator: ":")
        guard parts.count == 2, let version = Int64(parts[0]), parts[1].utf8.count % 2 == 0 else { return nil }
        var hash: [UInt8] = []
        var digits = parts[1].utf8.makeIterator()
        while let high = digits.next(), let low = digits.next() {
            guard let byte = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
            hash.append(byte)
        }
        return (version, hash)
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
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
