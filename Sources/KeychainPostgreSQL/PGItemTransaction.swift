import KeychainCore
import KeychainStore

/// The operations of one `PGItemStore.transaction`, on the thread's connection inside its open
/// transaction: secrets sealed with the keyring (against the node's reserved encryptions), the
/// same AAD binding as on SQLite (items' secrets and the KV values: `SealBinding`), each
/// group's usage settled before commit.
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

    // MARK: Webhooks

    func recordWebhookEvent(_ event: WebhookEvent) throws {
        try run { try PGWebhookTable.enqueue(event, on: db) }
    }

    // MARK: KV

    /// Every KV operation on a secret first takes its lock (`PGKVTable.lock`), held until commit.
    func kvMetadata(of key: KVSecretKey) throws -> KVMetadata? {
        try run {
            try PGKVTable.lock(key, on: db)
            return try Self.kvMetadata(of: key, keyring: keyring, on: db)
        }
    }

    func kvVersions(of key: KVSecretKey) throws -> [KVVersion] {
        try run {
            try PGKVTable.lock(key, on: db)
            return try PGKVTable.versions(of: key, on: db)
        }
    }

    func kvVersion(_ number: Int, of key: KVSecretKey) throws -> KVVersion? {
        try run {
            try PGKVTable.lock(key, on: db)
            return try Self.kvVersion(number, of: key, keyring: keyring, on: db)
        }
    }

    func kvPaths(in group: String, prefix: String) throws -> [String] {
        try run { try PGKVTable.paths(in: group, prefix: prefix, on: db) }
    }

    /// The custom metadata is sealed again on every write (bound to the secret's row); none is
    /// stored as no box (reads open none when its bytes are 0). Its bytes move the group's
    /// attribute bytes.
    func kvPutMetadata(_ metadata: KVMetadata, of key: KVSecretKey) throws {
        try run {
            try PGKVTable.lock(key, on: db)
            let bytes = Int64(metadata.customMetadataBytes)
            let sealed = bytes > 0
                ? try keyring.seal(
                    KVCustomMetadataEncoding.encode(metadata.customMetadata), binding: .kvCustomMetadata(key),
                    reservingFrom: reservations)
                : []
            let previous = try PGKVTable.customMetadataBytes(of: key, on: db) ?? 0
            try PGKVTable.putSecret(metadata, sealedCustomMetadata: sealed, customMetadataBytes: bytes, of: key, on: db)
            usage.record(key.group, GroupUsage(attributeBytes: bytes - previous))
        }
    }

    func kvPutVersion(_ version: KVVersion, of key: KVSecretKey) throws {
        try run {
            try PGKVTable.lock(key, on: db)
            guard try PGKVTable.customMetadataBytes(of: key, on: db) != nil else {
                throw KeychainError.param("KV secret \(key) has no metadata")
            }
            let stored = try PGKVTable.version(version.number, of: key, on: db)
            let data = try KVVersionData.toStore(version, of: key, replacing: stored.map { ($0.sealedData, $0.dataBytes) }) {
                try keyring.seal($0, binding: $1, reservingFrom: reservations)
            }
            try PGKVTable.putVersion(version, sealedData: data.box, dataBytes: data.bytes, of: key, on: db)
            usage.record(key.group, GroupUsage(secretBytes: data.bytes - (stored?.dataBytes ?? 0)))
        }
    }

    func kvRemoveVersions(below number: Int, of key: KVSecretKey) throws -> Int {
        try run {
            try PGKVTable.lock(key, on: db)
            let removed = try PGKVTable.deleteVersions(below: number, of: key, on: db)
            usage.record(key.group, GroupUsage(secretBytes: -removed.dataBytes))
            return removed.count
        }
    }

    func kvRemove(_ key: KVSecretKey) throws -> Bool {
        try run {
            try PGKVTable.lock(key, on: db)
            let versions = try PGKVTable.deleteVersions(of: key, on: db)
            let customMetadataBytes = try PGKVTable.deleteSecret(key, on: db)
            usage.record(key.group, GroupUsage(secretBytes: -versions.dataBytes, attributeBytes: -(customMetadataBytes ?? 0)))
            return customMetadataBytes != nil
        }
    }

    /// A secret's metadata on `db`, its custom metadata opened.
    static func kvMetadata(of key: KVSecretKey, keyring: Keyring, on db: PGConnection) throws -> KVMetadata? {
        try PGKVTable.secret(key, on: db).map {
            try keyring.openKVMetadata(
                $0.metadata, sealedCustomMetadata: $0.sealedCustomMetadata, customMetadataBytes: $0.customMetadataBytes, of: key)
        }
    }

    /// A kept version on `db`, its data opened.
    static func kvVersion(_ number: Int, of key: KVSecretKey, keyring: Keyring, on db: PGConnection) throws -> KVVersion? {
        try PGKVTable.version(number, of: key, on: db).map { try keyring.openKVVersion($0.version, sealedData: $0.sealedData, of: key) }
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
