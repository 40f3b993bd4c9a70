public import Foundation
public import KeychainCore
import KeychainStore

/// `ConnectSessionStore` over the `connect_sessions` table (migration 8): the verifier sealed on
/// the writer connection, as items' secrets are; a state taken by one `UPDATE … RETURNING`, so
/// that of two callbacks with one state, one gets the session.
final class SQLiteConnectSessionStore: ConnectSessionStore {
    private let pool: ConnectionPool
    private let keyring: Keyring

    init(pool: ConnectionPool, keyring: Keyring) {
        self.pool = pool
        self.keyring = keyring
    }

    private static let columns = """
        connect_id, provider, access_group, service, user, scopes, redirect_uri, return_to, verifier, state_hash,
        browser_hash, created, expires, outcome, error, refreshable, granted_scope
        """

    func create(_ session: ConnectSession) throws {
        let outcome = ConnectSessionColumns.encode(session.outcome)
        try StoreErrors.map {
            try keyring.withKeys {
                try pool.write { db in
                    try keyring.transaction(on: db) {
                        try keyring.prepareForSealing(1, on: db)
                        let verifier = try keyring.seal(session.verifier, binding: .connectVerifier(connectId: session.id), on: db)
                        _ = try db.execute(
                            "INSERT INTO connect_sessions (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            [
                                .text(session.id), .text(session.provider), .text(session.key.group), .text(session.key.service),
                                session.key.user.map(SQLiteValue.text) ?? .null,
                                .text(ConnectSessionColumns.encode(scopes: session.scopes)), .text(session.redirectURI),
                                session.returnTo.map(SQLiteValue.text) ?? .null, .blob(verifier),
                                session.stateHash.map(SQLiteValue.blob) ?? .null, session.browserHash.map(SQLiteValue.blob) ?? .null,
                                .integer(session.createdAt.millisecondsSince1970), .integer(session.expiresAt.millisecondsSince1970),
                                .text(outcome.name), outcome.error.map(SQLiteValue.text) ?? .null,
                                outcome.refreshable.map { .integer($0 ? 1 : 0) } ?? .null,
                                outcome.grantedScope.map(SQLiteValue.text) ?? .null,
                            ])
                    }
                }
            }
        }
    }

    func session(id: String) throws -> ConnectSession? {
        try StoreErrors.map {
            try keyring.withKeys {
                try pool.read { db in
                    try db.query("SELECT \(Self.columns) FROM connect_sessions WHERE connect_id = ?", [.text(id)]) {
                        try session(from: $0)
                    }.first
                }
            }
        }
    }

    func bindBrowser(id: String, browserHash: [UInt8], stateHash: [UInt8], at now: Date) throws -> BrowserBinding {
        try StoreErrors.map {
            try pool.write { db in
                let bound = try db.execute(
                    """
                    UPDATE connect_sessions SET browser_hash = ?, state_hash = ?
                    WHERE connect_id = ? AND outcome = 'pending' AND expires > ?
                        AND (browser_hash IS NULL OR (browser_hash = ? AND state_hash IS NOT NULL))
                    """,
                    [.blob(browserHash), .blob(stateHash), .text(id), .integer(now.millisecondsSince1970), .blob(browserHash)])
                if bound > 0 { return .bound }
                let pending = try db.scalarInt(
                    "SELECT count(*) FROM connect_sessions WHERE connect_id = ? AND outcome = 'pending' AND expires > ?",
                    [.text(id), .integer(now.millisecondsSince1970)])
                return pending == 1 ? .heldElsewhere : .notPending
            }
        }
    }

    func consumeState(_ stateHash: [UInt8], at now: Date) throws -> ConnectSession? {
        try StoreErrors.map {
            try keyring.withKeys {
                try pool.write { db in
                    try db.query(
                        """
                        UPDATE connect_sessions SET state_hash = NULL
                        WHERE state_hash = ? AND outcome = 'pending' AND expires > ?
                        RETURNING \(Self.columns)
                        """, [.blob(stateHash), .integer(now.millisecondsSince1970)]
                    ) { try session(from: $0) }.first
                }
            }
        }
    }

    func finish(id: String, outcome: ConnectOutcome) throws -> Bool {
        let columns = ConnectSessionColumns.encode(outcome)
        return try StoreErrors.map {
            try pool.write { db in
                try db.execute(
                    """
                    UPDATE connect_sessions SET outcome = ?, error = ?, refreshable = ?, granted_scope = ?, state_hash = NULL
                    WHERE connect_id = ? AND outcome = 'pending'
                    """,
                    [
                        .text(columns.name), columns.error.map(SQLiteValue.text) ?? .null,
                        columns.refreshable.map { .integer($0 ? 1 : 0) } ?? .null,
                        columns.grantedScope.map(SQLiteValue.text) ?? .null, .text(id),
                    ]) > 0
            }
        }
    }

    func ended(among ids: [String]) throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        return try StoreErrors.map {
            let pending = try pool.read { db in
                try db.query(
                    """
                    SELECT connect_id FROM connect_sessions
                    WHERE outcome = 'pending' AND connect_id IN (SELECT value FROM json_each(?))
                    """, [.text(try Self.jsonArray(ids))]
                ) { $0.text(0) }
            }
            return Set(ids).subtracting(pending)
        }
    }

    func purge(expiredBefore time: Date) throws -> Int {
        try StoreErrors.map {
            try pool.write { db in
                try db.execute("DELETE FROM connect_sessions WHERE expires < ?", [.integer(time.millisecondsSince1970)])
            }
        }
    }

    /// The ids as a JSON array of strings, for one bound parameter however many there are.
    private static func jsonArray(_ ids: [String]) throws -> String {
        String(decoding: try JSONEncoder().encode(ids), as: UTF8.self)
    }

    private func session(from row: SQLiteStatement) throws -> ConnectSession {
        let id = row.text(0)
        let refreshable = row.optionalInt64(15).map { $0 != 0 }
        return ConnectSession(
            id: id, provider: row.text(1),
            key: RefreshKey(service: row.text(3), user: row.optionalText(4), group: row.text(2)),
            scopes: ConnectSessionColumns.decode(scopes: row.text(5)), redirectURI: row.text(6), returnTo: row.optionalText(7),
            verifier: try keyring.openConnectVerifier(row.blob(8), connectId: id),
            createdAt: Date(millisecondsSince1970: row.int64(11)), expiresAt: Date(millisecondsSince1970: row.int64(12)),
            stateHash: row.isNull(9) ? nil : row.blob(9), browserHash: row.isNull(10) ? nil : row.blob(10),
            outcome: try ConnectSessionColumns.decode(
                name: row.text(13), error: row.optionalText(14), refreshable: refreshable, grantedScope: row.optionalText(16)))
    }
}

/// Re-encryption of the sessions' verifiers (`SQLiteItemStore+Reencryption`): a verifier's term
/// is compared as its box holds it, as the KV tables' values are.
extension SQLiteConnectSessionStore {
    private static let verifierTerm = "substr(verifier, \(SealedBox.termStart), \(SealedBox.termLength))"

    static func countSealed(olderThan term: UInt32, on db: SQLiteConnection) throws -> Int {
        Int(try db.scalarInt(
            "SELECT count(*) FROM connect_sessions WHERE \(verifierTerm) < ?", [.blob(SealedBox.termKey(term))]) ?? 0)
    }

    static func hasSealed(underTerm term: UInt32, on db: SQLiteConnection) throws -> Bool {
        try db.scalarInt(
            "SELECT EXISTS (SELECT 1 FROM connect_sessions WHERE \(verifierTerm) = ?)", [.blob(SealedBox.termKey(term))]) == 1
    }

    /// Re-seals up to `limit` verifiers sealed under a term older than `term`, inside the
    /// keyring's write transaction on `db`; how many.
    static func reseal(olderThan term: UInt32, limit: Int, keyring: Keyring, on db: SQLiteConnection) throws -> Int {
        guard limit > 0 else { return 0 }
        let rows = try db.query(
            "SELECT connect_id, verifier FROM connect_sessions WHERE \(verifierTerm) < ? LIMIT ?",
            [.blob(SealedBox.termKey(term)), .integer(Int64(limit))]
        ) { ($0.text(0), $0.blob(1)) }
        for (id, box) in rows {
            let binding = SealBinding.connectVerifier(connectId: id)
            let verifier = try keyring.open(box, binding: binding)
            _ = try db.execute(
                "UPDATE connect_sessions SET verifier = ? WHERE connect_id = ?",
                [.blob(try keyring.seal(verifier, binding: binding, on: db)), .text(id)])
        }
        return rows.count
    }
}
