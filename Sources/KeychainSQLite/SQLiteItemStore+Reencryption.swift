import KeychainCore
import KeychainStore

extension SQLiteItemStore: ReencryptingStore {
    /// How many stored secrets (items', the KV tables' sealed values, the providers' client
    /// secrets, connect sessions' verifiers and webhooks' keys) are sealed under a term older than
    /// `term`. Needs no key.
    package func countSecrets(olderThan term: UInt32) throws -> Int {
        try StoreErrors.map {
            try pool.read { db in
                try ItemTable.countSecrets(olderThan: term, on: db) + KVTable.countSealed(olderThan: term, on: db)
                    + SQLiteProviderStore.countSealed(olderThan: term, on: db)
                    + SQLiteConnectSessionStore.countSealed(olderThan: term, on: db)
                    + WebhookTable.countSealed(olderThan: term, on: db)
            }
        }
    }

    /// Re-seals up to `limit` secrets sealed under a term older than `term` with the current
    /// term, in one transaction: items' in `seq` order after `afterSeq`, then, once they are
    /// done, the KV tables' values, the providers' client secrets, connect sessions' verifiers, then webhooks' keys. Returns the last item `seq` visited (`afterSeq` when none)
    /// and how many were re-sealed, or nil when none is left.
    package func reencryptBatch(olderThan term: UInt32, after afterSeq: Int64, limit: Int) throws -> (lastSeq: Int64, count: Int)? {
        try StoreErrors.map { try keyring.withKeys {
            try pool.write { db in
                try keyring.transaction(on: db) { () -> (lastSeq: Int64, count: Int)? in
                    try keyring.prepareForSealing(limit, on: db)
                    let secrets = try ItemTable.secrets(olderThan: term, after: afterSeq, limit: limit, on: db)
                    for secret in secrets {
                        let binding = SealBinding(
                            itemClass: secret.itemClass, persistentRef: secret.persistentRef, accessGroup: secret.accessGroup)
                        let plaintext = try keyring.open(secret.box, binding: binding)
                        try ItemTable.replaceSecret(of: secret.seq, with: keyring.seal(plaintext, binding: binding, on: db), on: db)
                    }
                    let values = secrets.count < limit
                        ? try KVTable.sealed(olderThan: term, limit: limit - secrets.count, on: db) : []
                    for value in values {
                        let plaintext = try keyring.open(value.box, binding: value.binding)
                        try KVTable.replace(value, with: keyring.seal(plaintext, binding: value.binding, on: db), on: db)
                    }
                    let done = secrets.count + values.count
                    let clientSecrets = done < limit
                        ? try SQLiteProviderStore.sealed(olderThan: term, limit: limit - done, on: db) : []
                    for (name, box) in clientSecrets {
                        let binding = SealBinding.providerClientSecret(provider: name)
                        let plaintext = try keyring.open(box, binding: binding)
                        try SQLiteProviderStore.replaceSecret(of: name, with: keyring.seal(plaintext, binding: binding, on: db), on: db)
                    }
                    let verifiers = try SQLiteConnectSessionStore.reseal(
                        olderThan: term, limit: limit - done - clientSecrets.count, keyring: keyring, on: db)
                    let resealed = done + clientSecrets.count + verifiers
                    let keys = resealed < limit
                        ? try WebhookTable.sealed(olderThan: term, limit: limit - resealed, on: db) : []
                    for key in keys {
                        let plaintext = try keyring.open(key.box, binding: .webhookSecret(key.name))
                        try WebhookTable.replaceSecret(
                            of: key.name, with: keyring.seal(plaintext, binding: .webhookSecret(key.name), on: db), on: db)
                    }
                    let count = resealed + keys.count
                    guard count > 0 else { return nil }
                    return (secrets.last?.seq ?? afterSeq, count)
                }
            }
        } }
    }

    /// Destroys the data keys of the terms older than `term` that no stored secret is sealed
    /// under any more (after a re-encryption under `term`): their rows are deleted in one write
    /// transaction, which checks each term's secrets, then the keyring forgets (and wipes) them.
    /// The newest term is never retired. Returns the terms retired.
    @discardableResult
    package func retireTerms(olderThan term: UInt32) throws -> [UInt32] {
        try StoreErrors.map {
            let candidates = keyring.terms.filter { $0 < term && $0 != keyring.currentTerm }
            guard !candidates.isEmpty else { return [] }
            let retired = try pool.write { db in
                try db.transaction {
                    var retired: [UInt32] = []
                    for candidate in candidates
                    where try !ItemTable.hasSecrets(underTerm: candidate, on: db) && !KVTable.hasSealed(underTerm: candidate, on: db)
                        && !SQLiteProviderStore.hasSealed(underTerm: candidate, on: db)
                        && !SQLiteConnectSessionStore.hasSealed(underTerm: candidate, on: db)
                        && !WebhookTable.hasSealed(underTerm: candidate, on: db)
                    {
                        try KeyringTable.deleteTerm(candidate, on: db)
                        retired.append(candidate)
                    }
                    return retired
                }
            }
            keyring.forget(retiredTerms: retired)
            return retired
        }
    }
}
