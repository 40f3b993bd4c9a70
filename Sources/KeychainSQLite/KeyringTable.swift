import Foundation
import KeychainCore
import KeychainStore

/// The keyring's tables: `keyring`, one row per term (its data key wrapped under the master key,
/// when it was made, how many secrets it has sealed), and `keyring_check`, the key check value.
/// Holds no key: `Keyring` wraps and unwraps, this reads and writes the rows (`KeyringStorage`),
/// and the write transactions of the item store record what they seal here (`recordEncryptions`).
struct KeyringTable: KeyringStorage {
    let pool: ConnectionPool

    func create(checkValue: [UInt8], firstWrappedKey: [UInt8]) throws -> Bool {
        try pool.write { db in
            try db.transaction {
                guard try Self.checkValue(on: db) == nil else { return false }
                try db.execute("INSERT INTO keyring_check (id, check_value) VALUES (1, ?)", [.blob(checkValue)])
                try Self.insertTerm(1, wrappedKey: firstWrappedKey, on: db)
                return true
            }
        }
    }

    /// The stored key check value, nil when there is none.
    func checkValue() throws -> [UInt8]? {
        try pool.read { db in try Self.checkValue(on: db) }
    }

    /// Read in one snapshot on the writer (so that no write can come between them).
    func load() throws -> KeyringRows {
        try pool.write { db in try db.read { try Self.rows(on: db) } }
    }

    func addTerm(_ term: UInt32, wrappedKey: [UInt8], checkValue: [UInt8]) throws -> Bool {
        try pool.write { db in
            try db.transaction {
                guard try Self.checkValue(on: db) == checkValue,
                    try db.scalarInt("SELECT count(*) FROM keyring WHERE term = ?", [.integer(Int64(term))]) == 0
                else { return false }
                try Self.insertTerm(term, wrappedKey: wrappedKey, on: db)
                return true
            }
        }
    }

    /// On the writer throughout, so that no term is started between reading the rows and the
    /// new master key taking over.
    func rewrap(_ rewrap: (KeyringRows) throws -> KeyringRewrap) throws {
        try pool.write { db in
            try db.transaction {
                let wrapped = try rewrap(try Self.rows(on: db))
                try Self.rewrap(wrapped.terms, checkValue: wrapped.checkValue, on: db)
            }
        }
    }

    private static func rows(on db: SQLiteConnection) throws -> KeyringRows {
        let terms = try db.query("SELECT term, wrapped_key, encryptions FROM keyring ORDER BY term") {
            KeyringRows.StoredTerm(
                term: UInt32(truncatingIfNeeded: $0.int64(0)), wrappedKey: $0.blob(1),
                encryptions: UInt64(max(0, $0.int64(2))))
        }
        return KeyringRows(checkValue: try checkValue(on: db), terms: terms)
    }

    // MARK: Inside a caller's transaction

    /// The key check value on `db`, nil when there is none.
    static func checkValue(on db: SQLiteConnection) throws -> [UInt8]? {
        try db.query("SELECT check_value FROM keyring_check WHERE id = 1") { $0.blob(0) }.first
    }

    /// How many terms the keyring on `db` holds.
    static func termCount(on db: SQLiteConnection) throws -> Int {
        Int(try db.scalarInt("SELECT count(*) FROM keyring") ?? 0)
    }

    /// Adds a term, made now, that has sealed nothing yet; inside a write transaction on `db`.
    static func insertTerm(_ term: UInt32, wrappedKey: [UInt8], on db: SQLiteConnection) throws {
        try db.execute(
            "INSERT INTO keyring (term, wrapped_key, created, encryptions) VALUES (?, ?, ?, 0)",
            [.integer(Int64(term)), .blob(wrappedKey), .integer(Date().millisecondsSince1970)])
    }

    /// Replaces the terms' wrapped keys and the key check value; inside a write transaction on `db`.
    static func rewrap(_ wrappedKeys: [(term: UInt32, wrappedKey: [UInt8])], checkValue: [UInt8], on db: SQLiteConnection)
        throws
    {
        for (term, wrapped) in wrappedKeys {
            try db.execute("UPDATE keyring SET wrapped_key = ? WHERE term = ?", [.blob(wrapped), .integer(Int64(term))])
        }
        try db.execute("UPDATE keyring_check SET check_value = ? WHERE id = 1", [.blob(checkValue)])
    }

    /// Deletes a term's row (its wrapped data key); inside a write transaction on `db`.
    static func deleteTerm(_ term: UInt32, on db: SQLiteConnection) throws {
        try db.execute("DELETE FROM keyring WHERE term = ?", [.integer(Int64(term))])
    }

    /// Records that `term` has sealed `count` secrets (the count never goes down); inside the
    /// write transaction on `db` that stores them.
    static func recordEncryptions(_ count: UInt64, term: UInt32, on db: SQLiteConnection) throws {
        try db.execute(
            "UPDATE keyring SET encryptions = max(encryptions, ?) WHERE term = ?",
            [.integer(Int64(count)), .integer(Int64(term))])
    }
}
