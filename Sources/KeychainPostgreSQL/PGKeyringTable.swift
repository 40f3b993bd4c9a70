import Foundation
import KeychainCore
import KeychainStore

/// The keyring's tables on PostgreSQL, as `KeyringTable` holds them on SQLite: `keyring`, one row
/// per term (its data key wrapped under the master key, when it was made, how many secrets it has
/// sealed), and `keyring_check`, the key check value. Holds no key.
///
/// Several nodes write these rows, so what SQLite's single writer could assume is spelled out:
/// the first node's `create` initialises and any later one finds it done, a term two nodes start
/// at once is written by one of them, and each node adds the secrets it sealed to the term's count
/// rather than writing its own total.
enum PGKeyringTable {
    /// Writes the key check value and term 1 into an empty keyring, in the caller's transaction;
    /// false (and nothing written) when the keyring already has its check value: another node
    /// initialised it first.
    static func create(checkValue: [UInt8], firstWrappedKey: [UInt8], on db: PGConnection) throws -> Bool {
        let created = try db.execute(
            "INSERT INTO keyring_check (id, check_value) VALUES (1, $1) ON CONFLICT DO NOTHING RETURNING id",
            [.bytea(checkValue)]
        ).count == 1
        if created { _ = try insertTerm(1, wrappedKey: firstWrappedKey, on: db) }
        return created
    }

    /// The key check value and every term, ascending, in one statement (one snapshot).
    static func load(on db: PGConnection) throws -> KeyringRows {
        let rows = try db.execute(
            """
            SELECT c.check_value, k.term, k.wrapped_key, k.encryptions
            FROM (SELECT 1) AS one LEFT JOIN keyring_check c ON c.id = 1 LEFT JOIN keyring k ON true
            ORDER BY k.term
            """)
        guard rows.count > 0 else { return KeyringRows(checkValue: nil, terms: []) }
        let check = rows.isNull(0, 0) ? nil : rows.bytes(0, 0)
        let terms = (0..<rows.count).filter { !rows.isNull($0, 1) }.map { row in
            KeyringRows.StoredTerm(
                term: UInt32(truncatingIfNeeded: rows.int64(row, 1)), wrappedKey: rows.bytes(row, 2),
                encryptions: UInt64(max(0, rows.int64(row, 3))))
        }
        return KeyringRows(checkValue: check, terms: terms)
    }

    /// Adds a term, made now, that has sealed nothing yet; false when another node wrote that
    /// term first (the caller then loads the keyring again and uses theirs).
    static func insertTerm(_ term: UInt32, wrappedKey: [UInt8], on db: PGConnection) throws -> Bool {
        try db.execute(
            "INSERT INTO keyring (term, wrapped_key, created, encryptions) VALUES ($1, $2, $3, 0) "
                + "ON CONFLICT DO NOTHING RETURNING term",
            [.int8(Int64(term)), .bytea(wrappedKey), .int8(Date().millisecondsSince1970)]
        ).count == 1
    }

    /// Adds `count` secrets sealed by this node to `term`'s count, in the transaction that stores
    /// them; returns the count over every node, nil when the term is not stored.
    static func addEncryptions(_ count: UInt64, term: UInt32, on db: PGConnection) throws -> UInt64? {
        let rows = try db.execute(
            "UPDATE keyring SET encryptions = encryptions + $1 WHERE term = $2 RETURNING encryptions",
            [.int8(Int64(count)), .int8(Int64(term))])
        return rows.count == 1 ? UInt64(max(0, rows.int64(0, 0))) : nil
    }

    /// Replaces the terms' wrapped keys and the key check value, in the caller's transaction.
    static func rewrap(_ wrappedKeys: [(term: UInt32, wrappedKey: [UInt8])], checkValue: [UInt8], on db: PGConnection)
        throws
    {
        for (term, wrapped) in wrappedKeys {
            try db.execute("UPDATE keyring SET wrapped_key = $1 WHERE term = $2", [.bytea(wrapped), .int8(Int64(term))])
        }
        try db.execute("UPDATE keyring_check SET check_value = $1 WHERE id = 1", [.bytea(checkValue)])
    }
}
