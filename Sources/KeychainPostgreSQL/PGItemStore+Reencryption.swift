import KeychainCore
import KeychainStore

/// Re-encryption on PostgreSQL, as on SQLite (`SQLiteItemStore+Reencryption`): batches of secrets
/// (items', then the KV tables' values, then the providers' client secrets, then connect sessions' verifiers, then webhooks' keys) sealed under older terms re-sealed under the current one, then the terms that seal nothing
/// any more retired for every node. A secret's term is compared as the box holds it
/// (`SealedBox.termStart`), whose byte-wise order is term order.
extension PGItemStore: ReencryptingStore {
    func countSecrets(olderThan term: UInt32) throws -> Int {
        try StoreErrors.map {
            try connections.withConnection { db in
                Int(try db.execute(
                    "SELECT count(*) FROM items WHERE secret IS NOT NULL AND \(Self.secretTerm) < $1",
                    [Self.termBytes(term)]
                ).int64(0, 0)) + (try PGKVTable.countSealed(olderThan: term, on: db))
                    + (try PGProviderStore.countSealed(olderThan: term, on: db))
                    + (try PGConnectSessionStore.countSealed(olderThan: term, on: db))
                    + (try PGWebhookTable.countSealed(olderThan: term, on: db))
            }
        }
    }

    func reencryptBatch(olderThan term: UInt32, after afterSeq: Int64, limit: Int) throws -> (lastSeq: Int64, count: Int)? {
        try StoreErrors.map { try keyring.withKeys {
            try connections.withConnection { db in
                try db.transaction { () -> (lastSeq: Int64, count: Int)? in
                    let rows = try db.execute(
                        """
                        SELECT seq, class, persistent_ref, coalesce("accessGroup", ''), secret FROM items
                        WHERE seq > $1 AND secret IS NOT NULL AND \(Self.secretTerm) < $2
                        ORDER BY seq LIMIT $3 FOR UPDATE
                        """,
                        [.int8(afterSeq), Self.termBytes(term), .int8(Int64(limit))])
                    for row in 0..<rows.count {
                        guard let itemClass = ItemClass.storedByCode[rows.text(row, 1)],
                            let ref = PersistentRef(rows.text(row, 2))
                        else { throw KeychainError.decode("a stored item has an unknown class or a malformed persistent reference") }
                        let binding = SealBinding(itemClass: itemClass, persistentRef: ref, accessGroup: rows.text(row, 3))
                        let plaintext = try keyring.open(rows.bytes(row, 4), binding: binding)
                        try db.execute(
                            "UPDATE items SET secret = $1 WHERE seq = $2",
                            [.bytea(try keyring.seal(plaintext, binding: binding, reservingFrom: reservations)), .int8(rows.int64(row, 0))])
                    }
                    let values = rows.count < limit
                        ? try PGKVTable.sealed(olderThan: term, limit: limit - rows.count, on: db) : []
                    for value in values {
                        let plaintext = try keyring.open(value.box, binding: value.binding)
                        try PGKVTable.replace(
                            value, with: keyring.seal(plaintext, binding: value.binding, reservingFrom: reservations), on: db)
                    }
                    let done = rows.count + values.count
                    let clientSecrets = done < limit
                        ? try PGProviderStore.reencrypt(
                            olderThan: term, limit: limit - done, keyring: keyring, reservations: reservations, on: db) : 0
                    let verifiers = try PGConnectSessionStore.reseal(
                        olderThan: term, limit: limit - done - clientSecrets, keyring: keyring, reservations: reservations,
                        on: db)
                    let resealed = done + clientSecrets + verifiers
                    let keys = resealed < limit
                        ? try PGWebhookTable.sealed(olderThan: term, limit: limit - resealed, on: db) : []
                    for key in keys {
                        let plaintext = try keyring.open(key.box, binding: .webhookSecret(key.name))
                        try PGWebhookTable.replaceSecret(
                            of: key.name, with: keyring.seal(plaintext, binding: .webhookSecret(key.name), reservingFrom: reservations),
                            on: db)
                    }
                    let count = resealed + keys.count
                    guard count > 0 else { return nil }
                    return (rows.count > 0 ? rows.int64(rows.count - 1, 0) : afterSeq, count)
                }
            }
        } }
    }

    /// Deletes the terms older than `term` that no stored secret is sealed under any more, in one
    /// transaction under the keyring's lock, which announces it: every node then forgets them.
    @discardableResult
    func retireTerms(olderThan term: UInt32) throws -> [UInt32] {
        try StoreErrors.map {
            let candidates = keyring.terms.filter { $0 < term && $0 != keyring.currentTerm }
            guard !candidates.isEmpty else { return [] }
            let retired = try reservations.retire(candidates) { term, db in
                try db.execute(
                    "SELECT 1 FROM items WHERE secret IS NOT NULL AND \(Self.secretTerm) = $1 LIMIT 1",
                    [Self.termBytes(term)]
                ).count == 0 && !PGKVTable.hasSealed(underTerm: term, on: db)
                    && !PGProviderStore.hasSealed(underTerm: term, on: db)
                    && !PGConnectSessionStore.hasSealed(underTerm: term, on: db)
                    && !PGWebhookTable.hasSealed(underTerm: term, on: db)
            }
            keyring.forget(retiredTerms: retired)
            return retired
        }
    }

    /// A stored secret's term, as bytes whose order is term order (`SealedBox.termStart`).
    private static let secretTerm = "substring(secret FROM \(SealedBox.termStart) FOR \(SealedBox.termLength))"

    private static func termBytes(_ term: UInt32) -> PGValue { .bytea(SealedBox.termKey(term)) }
}
