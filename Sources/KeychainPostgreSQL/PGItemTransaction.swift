import KeychainCore
import KeychainStore

/// The operations of one `PGItemStore.transaction`, on the thread's connection inside its open
/// transaction: secrets sealed with the keyring (against the node's reserved encryptions), the
/// same AAD binding as on SQLite, each group's usage settled before commit.
final class PGItemTransaction: ItemOperations {
    private let db: PGConnection
    private let keyring: Keyring
    private let reservations: PGKeyringStorage
    private var doom = TransactionDoom()
    /// The first error an operation threw: the transaction then commits nothing.
    var failure: KeychainError? { doom.failure }
    private var usage = GroupUsageChanges()

    init(db: PGConnection, keyring: Keyring, reservations: PGKeyringStorage) {
        self.db = db
        self.keyring = keyring
        self.reservations = reservations
    }

    /// The unique indexes decide duplicates (`ON CONFLICT DO NOTHING` answers no row), so two
    /// nodes adding the same item at once cannot both succeed.
    func add(_ items: [Item]) throws {
        try run {
            for item in items {
                let sealed = try item.secret.map { try keyring.seal($0, binding: SealBinding(of: item), reservingFrom: reservations) }
                guard try PGItemTable.insert(item, sealedSecret: sealed, on: db) != nil else {
                    throw KeychainError.duplicateItem()
                }
                usage.recordAdded(item, to: item.accessGroup)
            }
        }
    }

    func find(
        _ filter: ItemFilter, limit: Int?, after cursor: ItemCursor?, reading contents: ItemContents, maxBytes: Int?
    ) throws -> ItemPage {
        try run { try Self.page(filter, limit: limit, after: cursor, contents: contents, maxBytes: maxBytes, keyring: keyring, on: db) }
    }

    /// Every match's row is locked (`FOR UPDATE`) and rewritten: the secret is re-sealed when it
    /// changes or moves to another group. A primary-key clash aborts the transaction (23505).
    func update(_ filter: ItemFilter, with changes: ItemChanges) throws -> Int {
        try run {
            let plan = ItemUpdatePlan(filter, changes)
            let rows = try PGItemTable.rows(filter, after: nil, limit: nil, contents: .all, forUpdate: true, on: db)
            for row in rows {
                let modified: Int64? =
                    if case .date(let date)? = row.item.attributes[.modificationDate] { date.millisecondsSince1970 } else { nil }
                let change = try plan.change(
                    of: ItemUpdatePlan.Row(
                        persistentRef: row.item.persistentRef, accessGroup: row.accessGroup, modificationDate: modified,
                        sealedSecret: row.sealedSecret, attributes: row.item.attributes),
                    keyring: keyring, usage: &usage, seal: { try keyring.seal($0, binding: $1, reservingFrom: reservations) })
                try PGItemTable.update(
                    row.seq, attributes: plan.changedAttributes, modificationDate: change.modificationDate,
                    sealedSecret: change.sealedSecret, on: db)
            }
            return rows.count
        }
    }

    func delete(_ filter: ItemFilter) throws -> Int {
        try run {
            let deleted = try PGItemTable.delete(filter, on: db)
            for row in deleted {
                usage.recordDeleted(from: row.accessGroup, attributes: row.attributes, sealedBytes: row.sealedBytes)
            }
            return deleted.count
        }
    }

    /// Writes the usage changes and checks them against `quota`, as the last operation before commit.
    func settleUsage(quota: GroupQuota) throws {
        try run {
            try usage.settle(quota: quota) {
                try PGGroupUsageTable.add($1, to: $0, quota: quota, on: db)
            }
        }
    }

    private func run<T>(_ operation: () throws -> T) throws(KeychainError) -> T { try doom.run(operation) }

    /// A find's page on `db`: the rows after the cursor, read in chunks until the page is full by
    /// `limit` or `maxBytes` and one row more is known (so `next` is set only when more match).
    static func page(
        _ filter: ItemFilter, limit: Int?, after cursor: ItemCursor?, contents: ItemContents, maxBytes: Int?,
        keyring: Keyring, on db: PGConnection
    ) throws -> ItemPage {
        let wanted = limit.map { max(0, $0) + 1 }
        var rows: [FoundRow] = []
        var bytes = 0
        var after = cursor?.afterSequence
        while true {
            let chunk = min(wanted.map { $0 - rows.count } ?? Self.chunkSize, Self.chunkSize)
            let read = try PGItemTable.rows(filter, after: after, limit: chunk, contents: contents, on: db)
            for row in read {
                let found = FoundRow(seq: row.seq, item: row.item, sealedSecret: row.sealedSecret, accessGroup: row.accessGroup)
                rows.append(found)
                bytes += found.size
            }
            guard read.count == chunk, let last = read.last else { break }
            if let wanted, rows.count >= wanted { break }
            if let maxBytes, rows.count >= 2, bytes > maxBytes { break }
            after = last.seq
        }
        return try FoundRow.page(of: rows, limit: limit, maxBytes: maxBytes, keyring: keyring)
    }

    /// The rows one statement of a find reads at most.
    static let chunkSize = 256
}
