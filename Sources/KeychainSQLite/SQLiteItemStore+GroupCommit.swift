import KeychainCore
import KeychainStore

/// The body of one `SQLiteItemStore.transaction`, run by the leader of its batch.
typealias BatchedWrite = (SQLiteItemTransaction) throws -> Void

extension SQLiteItemStore {
    /// Commits a batch of writes in one `BEGIN IMMEDIATE` transaction on the writer, under the
    /// keys, with one COMMIT (one fsync). Each write of a batch of several runs in a savepoint of
    /// its own: when it fails (its body threw, an operation in it did, even if the body caught
    /// it, or it would take a group past its quota), its savepoint rolls back and it fails alone,
    /// a term it started forgotten with it. The quota checks each write on the totals the writes
    /// before it leave, and the batch writes each group's `group_usage` row once, at its end
    /// (`BatchedGroupUsage`). A write alone in its batch needs no savepoint: the transaction is
    /// its own.
    ///
    /// Every write fails when the transaction does (locked vault, BEGIN or COMMIT failing, a
    /// savepoint that cannot roll back): none of it is on disk, so none is acknowledged. The
    /// lookup map unlists the rows the committed writes deleted or re-keyed once the COMMIT has
    /// returned; `ConnectionPool.write` counts the batch (so the find caches drop what they hold)
    /// before `GroupCommit` wakes its writers.
    func commitBatch(_ batch: [GroupCommit<BatchedWrite>.Write]) {
        do {
            try keyring.withKeys {
                try pool.write { db in
                    var unlisted: Set<ItemLookupMap.Entry> = []
                    try keyring.transaction(on: db) {
                        if batch.count == 1 {
                            let transaction = SQLiteItemTransaction(db: db, keyring: keyring, lookups: lookups)
                            try run(batch[0], in: transaction)
                            unlisted = transaction.unlisted
                            return
                        }
                        var usage = BatchedGroupUsage()
                        for write in batch {
                            // Starts from what the writes before it unlisted: a row it lists again
                            // under the same key and `seq` stays listed.
                            let transaction = SQLiteItemTransaction(
                                db: db, keyring: keyring, lookups: lookups, unlisted: unlisted)
                            write.failure = try keyring.savepoint(on: db) {
                                try write.work?(transaction)
                                if let failure = transaction.failure { throw failure }
                                // Last: a write it admits is one whose savepoint is released.
                                try usage.admit(transaction.usage, quota: quota) { try GroupUsageTable.usage(of: $0, on: db) }
                            }
                            if write.failure == nil { unlisted = transaction.unlisted }
                        }
                        try usage.settle { _ = try GroupUsageTable.add($1, to: $0, on: db) }
                    }
                    lookups.remove(unlisted)
                }
            }
        } catch {
            for write in batch where write.failure == nil { write.failure = error }
        }
    }

    private func run(_ write: GroupCommit<BatchedWrite>.Write, in transaction: SQLiteItemTransaction) throws {
        try write.work?(transaction)
        if let failure = transaction.failure { throw failure }
        // In the write's own savepoint: a write past its group's quota fails alone, and the
        // writes after it in the batch are checked against the totals it leaves.
        try transaction.settleUsage(quota: quota)
    }
}
