import Foundation
import KeychainCore
import KeychainStore

/// `ConnectSessionStore` over the `connect_sessions` table on PostgreSQL (migration 9), as on
/// SQLite. A callback takes a state with one `UPDATE … RETURNING`: of two nodes taking the same
/// state at once, the second waits on the row's lock, then finds its condition false.
final class PGConnectSessionStore: ConnectSessionStore {
    private let connections: PGConnections
    private let keyring: Keyring
    private let reservations: PGKeyringStorage

    init(connections: PGConnections, keyring: Keyring, reservations: PGKeyringStorage) {
        self.connections = connections
        self.keyring = keyring
        self.reservations = reservations
    }

    private static let columns = """
        connect_id, provider, access_group, service, "user", scopes, redirect_uri, return_to, verifier, state_hash,
        browser_hash, created, expires, outcome, error, refreshable, granted_scope
        """

    func create(_ session: ConnectSession) throws {
        let outcome = ConnectSessionColumns.encode(session.outcome)
        try withConnection { db in
            let verifier = try keyring.withKeys {
                try keyring.seal(session.verifier, binding: .connectVerifier(connectId: session.id), reservingFrom: reservations)
            }
            try db.execute(
                """
                INSERT INTO connect_sessions (\(Self.columns))
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
                """,
                [
                    .text(session.id), .text(session.provider), .text(session.key.group), .text(session.key.service),
                    session.key.user.map(PGValue.text) ?? .null, .text(ConnectSessionColumns.encode(scopes: session.scopes)),
                    .text(session.redirectURI), session.returnTo.map(PGValue.text) ?? .null, .bytea(verifier),
                    session.stateHash.map(PGValue.bytea) ?? .null, session.browserHash.map(PGValue.bytea) ?? .null,
                    .int8(session.createdAt.millisecondsSince1970), .int8(session.expiresAt.millisecondsSince1970),
                    .text(outcome.name), outcome.error.map(PGValue.text) ?? .null, outcome.refreshable.map(PGValue.bool) ?? .null,
                    outcome.grantedScope.map(PGValue.text) ?? .null,
                ])
        }
    }

    func session(id: String) throws -> ConnectSession? {
        try withConnection { db in
            let rows = try db.execute("SELECT \(Self.columns) FROM connect_sessions WHERE connect_id = $1", [.text(id)])
            return rows.count == 1 ? try session(rows, 0) : nil
        }
    }

    func bindBrowser(id: String, browserHash: [UInt8], stateHash: [UInt8], at now: Date) throws -> BrowserBinding {
        try withConnection { db in
            let bound = try db.execute(
                """
                UPDATE connect_sessions SET browser_hash = $1, state_hash = $2
                WHERE connect_id = $3 AND outcome = 'pending' AND expires > $4
                    AND (browser_hash IS NULL OR (browser_hash = $1 AND state_hash IS NOT NULL))
                """, [.bytea(browserHash), .bytea(stateHash), .text(id), .int8(now.millisecondsSince1970)])
            if bound.affectedRows > 0 { return .bound }
            let pending = try db.execute(
                "SELECT 1 FROM connect_sessions WHERE connect_id = $1 AND outcome = 'pending' AND expires > $2",
                [.text(id), .int8(now.millisecondsSince1970)])
            return pending.count == 1 ? .heldElsewhere : .notPending
        }
    }

    func consumeState(_ stateHash: [UInt8], at now: Date) throws -> ConnectSession? {
        try withConnection { db in
            let rows = try db.execute(
                """
                UPDATE connect_sessions SET state_hash = NULL
                WHERE state_hash = $1 AND outcome = 'pending' AND expires > $2
                RETURNING \(Self.columns)
                """, [.bytea(stateHash), .int8(now.millisecondsSince1970)])
            return rows.count == 1 ? try session(rows, 0) : nil
        }
    }

    func finish(id: String, outcome: ConnectOutcome) throws -> Bool {
        let columns = ConnectSessionColumns.encode(outcome)
        return try withConnection { db in
            try db.execute(
                """
                UPDATE connect_sessions SET outcome = $1, error = $2, refreshable = $3, granted_scope = $4, state_hash = NULL
                WHERE connect_id = $5 AND outcome = 'pending'
                """,
                [
                    .text(columns.name), columns.error.map(PGValue.text) ?? .null, columns.refreshable.map(PGValue.bool) ?? .null,
                    columns.grantedScope.map(PGValue.text) ?? .null, .text(id),
                ]
            ).affectedRows > 0
        }
    }

    func ended(among ids: [String]) throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        return try withConnection { db in
            let rows = try db.execute(
                """
                SELECT connect_id FROM connect_sessions
                WHERE outcome = 'pending' AND connect_id = ANY (SELECT jsonb_array_elements_text($1::text::jsonb))
                """, [.text(String(decoding: try JSONEncoder().encode(ids), as: UTF8.self))])
            return Set(ids).subtracting((0..<rows.count).map { rows.text($0, 0) })
        }
    }

    func purge(expiredBefore time: Date) throws -> Int {
        try withConnection { db in
            try db.execute("DELETE FROM connect_sessions WHERE expires < $1", [.int8(time.millisecondsSince1970)]).affectedRows
        }
    }

    private func session(_ rows: PGRows, _ row: Int) throws -> ConnectSession {
        let id = rows.text(row, 0)
        return ConnectSession(
            id: id, provider: rows.text(row, 1),
            key: RefreshKey(service: rows.text(row, 3), user: rows.optionalText(row, 4), group: rows.text(row, 2)),
            scopes: ConnectSessionColumns.decode(scopes: rows.text(row, 5)), redirectURI: rows.text(row, 6),
            returnTo: rows.optionalText(row, 7),
            verifier: try keyring.withKeys { try keyring.openConnectVerifier(rows.bytes(row, 8), connectId: id) },
            createdAt: Date(millisecondsSince1970: rows.int64(row, 11)), expiresAt: Date(millisecondsSince1970: rows.int64(row, 12)),
            stateHash: rows.isNull(row, 9) ? nil : rows.bytes(row, 9), browserHash: rows.isNull(row, 10) ? nil : rows.bytes(row, 10),
            outcome: try ConnectSessionColumns.decode(
                name: rows.text(row, 13), error: rows.optionalText(row, 14),
                refreshable: rows.isNull(row, 15) ? nil : rows.bool(row, 15), grantedScope: rows.optionalText(row, 16)))
    }

    private func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        try StoreErrors.map { try connections.withConnection(body) }
    }
}

/// Re-encryption of the sessions' verifiers (`PGItemStore+Reencryption`), as on SQLite.
extension PGConnectSessionStore {
    private static let verifierTerm = "substring(verifier FROM \(SealedBox.termStart) FOR \(SealedBox.termLength))"

    static func countSealed(olderThan term: UInt32, on db: PGConnection) throws -> Int {
        Int(try db.execute(
            "SELECT count(*) FROM connect_sessions WHERE \(verifierTerm) < $1", [.bytea(SealedBox.termKey(term))]
        ).int64(0, 0))
    }

    static func hasSealed(underTerm term: UInt32, on db: PGConnection) throws -> Bool {
        try db.execute(
            "SELECT 1 FROM connect_sessions WHERE \(verifierTerm) = $1 LIMIT 1", [.bytea(SealedBox.termKey(term))]
        ).count > 0
    }

    /// Re-seals up to `limit` verifiers sealed under a term older than `term`, in the
    /// transaction open on `db`; how many.
    static func reseal(
        olderThan term: UInt32, limit: Int, keyring: Keyring, reservations: PGKeyringStorage, on db: PGConnection
    ) throws -> Int {
        guard limit > 0 else { return 0 }
        let rows = try db.execute(
            "SELECT connect_id, verifier FROM connect_sessions WHERE \(verifierTerm) < $1 LIMIT $2 FOR UPDATE",
            [.bytea(SealedBox.termKey(term)), .int8(Int64(limit))])
        for row in 0..<rows.count {
            let binding = SealBinding.connectVerifier(connectId: rows.text(row, 0))
            let verifier = try keyring.open(rows.bytes(row, 1), binding: binding)
            try db.execute(
                "UPDATE connect_sessions SET verifier = $1 WHERE connect_id = $2",
                [.bytea(try keyring.seal(verifier, binding: binding, reservingFrom: reservations)), .text(rows.text(row, 0))])
        }
        return rows.count
    }
}
