import KeychainCore

extension SQLiteItemStore {
    /// The first 5 bytes of a sealed box are `version | term (UInt32 BE)`, so
    /// `substr(secret, 2, 4)` is the term as a big-endian blob, and blob order is term order.
    static func termBlob(_ term: UInt32) -> [UInt8] {
        var bytes: [UInt8] = []
        SealedBox.appendUInt32(term, to: &bytes)
        return bytes
    }

    /// How many stored secrets are sealed under a term older than `term`. Needs no key.
    func countSecrets(olderThan term: UInt32) throws -> Int {
        try StoreErrors.map {
            try pool.read { db in
                Int(try db.scalarInt(
                    "SELECT count(*) FROM items WHERE secret IS NOT NULL AND substr(secret, 2, 4) < ?",
                    [.blob(Self.termBlob(term))]) ?? 0)
            }
        }
    }

    /// Re-seals up to `limit` secrets sealed under a term older than `term` with the current
    /// term, in one transaction, in `seq` order after `afterSeq`. Returns the last `seq` visited
    /// and how many were re-sealed, or nil when none is left.
    func reencryptBatch(olderThan term: UInt32, after afterSeq: Int64, limit: Int) throws -> (lastSeq: Int64, count: Int)? {
        try StoreErrors.map { try keyring.withKeys {
            try pool.write { db in
                try keyring.prepareForSealing(limit, on: db)
                return try db.transaction { () -> (lastSeq: Int64, count: Int)? in
                    let rows = try db.query(
                        """
                        SELECT seq, class, persistent_ref, ifnull("accessGroup", ''), secret FROM items
                        WHERE seq > ? AND secret IS NOT NULL AND substr(secret, 2, 4) < ? ORDER BY seq LIMIT ?
                        """,
                        [.integer(afterSeq), .blob(Self.termBlob(term)), .integer(Int64(limit))]
                    ) { row in (row.int64(0), row.text(1), row.text(2), row.text(3), row.blob(4)) }
                    guard let last = rows.last else { return nil }
                    for (seq, code, refText, group, box) in rows {
                        guard let itemClass = ItemClass.storedClasses.first(where: { $0.code == code }),
                            let ref = PersistentRef(refText)
                        else { throw KeychainError.decode("a stored item has an unknown class or a malformed persistent reference") }
                        let binding = SealBinding(itemClass: itemClass, persistentRef: ref, accessGroup: group)
                        let plaintext = try keyring.open(box, binding: binding)
                        let resealed = try keyring.seal(plaintext, binding: binding, on: db)
                        try db.execute("UPDATE items SET secret = ? WHERE seq = ?", [.blob(resealed), .integer(seq)])
                    }
                    return (last.0, rows.count)
                }
            }
        } }
    }
}
