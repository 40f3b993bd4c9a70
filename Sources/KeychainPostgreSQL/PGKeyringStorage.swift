import KeychainStore

/// The keyring's rows on PostgreSQL (`PGKeyringTable`) as a `KeyringStorage`, on a connection of
/// its own: a node reserves encryptions while a request's transaction is open on its thread's
/// connection, and the reservation must commit on its own. Writes that depend on what a node
/// believes (a term number, the check value it wraps under) take the keyring's advisory lock
/// and check it first; each change bumps `cluster_state.keyring_version` for the other nodes.
final class PGKeyringStorage: SharedKeyringStorage {
    private let connection: PGConnectionSlot
    let leaseSize: UInt64

    static let lockName = "keychaind:keyring"

    /// `leaseSize`: the encryptions a node reserves at a time.
    init(settings: PGSettings, leaseSize: UInt64 = 10_000) {
        connection = PGConnectionSlot(settings: settings)
        self.leaseSize = leaseSize
    }

    func create(checkValue: [UInt8], firstWrappedKey: [UInt8]) throws -> Bool {
        try connection.withConnection { db in
            try db.transaction { try PGKeyringTable.create(checkValue: checkValue, firstWrappedKey: firstWrappedKey, on: db) }
        }
    }

    func load() throws -> KeyringRows {
        try connection.withConnection { db in try PGKeyringTable.load(on: db) }
    }

    func addTerm(_ term: UInt32, wrappedKey: [UInt8], checkValue: [UInt8]) throws -> Bool {
        try lockedChange { db in
            guard try PGKeyringTable.load(on: db).checkValue == checkValue else { return false }
            return try PGKeyringTable.insertTerm(term, wrappedKey: wrappedKey, on: db)
        }
    }

    func rewrap(_ rewrap: (KeyringRows) throws -> KeyringRewrap) throws {
        _ = try lockedChange { db in
            let wrapped = try rewrap(try PGKeyringTable.load(on: db))
            try PGKeyringTable.rewrap(wrapped.terms, checkValue: wrapped.checkValue, on: db)
            return true
        }
    }

    func reserveEncryptions(_ count: UInt64, term: UInt32) throws -> UInt64? {
        try connection.withConnection { db in try PGKeyringTable.addEncryptions(count, term: term, on: db) }
    }

    /// Deletes the `candidates` that `isUnused` says no stored secret is sealed under, in one
    /// transaction; returns them.
    func retire(_ candidates: [UInt32], isUnused: (UInt32, PGConnection) throws -> Bool) throws -> [UInt32] {
        var retired: [UInt32] = []
        _ = try lockedChange { db in
            for term in candidates where try isUnused(term, db) {
                try db.execute("DELETE FROM keyring WHERE term = $1", [.int8(Int64(term))])
                retired.append(term)
            }
            return !retired.isEmpty
        }
        return retired
    }

    /// Runs `body` in a transaction holding the keyring's advisory lock; when it returns true,
    /// the change is announced to the other nodes.
    private func lockedChange(_ body: (PGConnection) throws -> Bool) throws -> Bool {
        try connection.withConnection { db in
            try db.transaction {
                try db.execute("SELECT pg_advisory_xact_lock(hashtext($1))", [.text(Self.lockName)])
                let changed = try body(db)
                if changed { try PGClusterState.bump(.keyring, on: db) }
                return changed
            }
        }
    }
}
