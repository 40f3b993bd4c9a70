import KeychainCore
import KeychainStore

/// The operations of one `SQLiteItemStore.transaction`, on the writer connection inside the open
/// write transaction of its batch (in a savepoint when the batch has several): secrets sealed with the keyring (AES-256-GCM, bound to the item's class,
/// persistent reference and access group; a KV version's data to its secret and number, a KV
/// secret's custom metadata to the secret: `SealBinding`), the lookup map kept a superset of the rows.
///
/// A row is listed in the lookup map when it is written (before any reader can see it) and
/// unlisted only once the transaction has committed (`unlisted`), unless a later write in it
/// listed it again under the same key and `seq` (SQLite numbers a row after the largest left, so
/// a row added after the newest was deleted takes its `seq`). A rolled-back transaction (or
/// savepoint) unlists nothing: what it listed stays, costing a find one read by `seq`.
final class SQLiteItemTransaction: ItemOperations {
    private let db: SQLiteConnection
    private let keyring: Keyring
    private let lookups: ItemLookupMap
    /// Rows deleted or re-keyed: removed from under these keys once the batch commits.
    private(set) var unlisted: Set<ItemLookupMap.Entry> = []
    private var doom = TransactionDoom()
    /// The first error an operation threw: the transaction then commits nothing.
    var failure: KeychainError? { doom.failure }
    /// What the transaction changes in each access group's usage, settled before it commits.
    private(set) var usage = GroupUsageChanges()

    /// `unlisted`: what the writes committed before this one in its batch unlisted.
    init(db: SQLiteConnection, keyring: Keyring, lookups: ItemLookupMap, unlisted: Set<ItemLookupMap.Entry> = []) {
        self.db = db
        self.keyring = keyring
        self.lookups = lookups
        self.unlisted = unlisted
    }

    /// Writes the transaction's usage changes and checks them against `quota`, as its last
    /// operation before the commit.
    func settleUsage(quota: GroupQuota) throws {
        try run {
            try usage.settle(quota: quota) { try GroupUsageTable.add($1, to: $0, on: db) }
        }
    }

    /// Uniqueness is enforced by the database (a partial UNIQUE index per class over the primary
    /// key with Apple's defaults), so two concurrent adds cannot both succeed.
    func add(_ items: [Item]) throws {
        try run {
            try keyring.prepareForSealing(items.count { $0.secret != nil }, on: db)
            for item in items {
                let sealed = try item.secret.map { try keyring.seal($0, binding: SealBinding(of: item), on: db) }
                let seq = try ItemTable.insert(item, sealedSecret: sealed, on: db)
                list(ItemLookupMap.Entry(key: ItemTable.lookupKey(of: item), seq: seq))
                usage.recordAdded(item, to: item.accessGroup)
            }
        }
    }

    /// Reads on the writer, past the find cache, so it sees this transaction's writes.
    func find(
        _ filter: ItemFilter, limit: Int?, after cursor: ItemCursor?, reading contents: ItemContents, maxBytes: Int?
    ) throws -> ItemPage {
        try run {
            let key = FindCache.Key(filter: filter, limit: limit, after: cursor, contents: contents, maxBytes: maxBytes)
            return try FoundRow.page(
                of: ItemReader.rows(for: key, lookups: lookups, on: db), limit: limit, maxBytes: maxBytes, keyring: keyring)
        }
    }

    func update(_ filter: ItemFilter, with changes: ItemChanges) throws -> Int {
        try run {
            let plan = ItemUpdatePlan(filter, changes)
            let lead = ItemLookupMap.keyAttributes(of: filter.itemClass)
            let rekeys = lead.contains { changes.attributes.keys.contains($0) }
            try keyring.prepareForSealing(changes.secret != nil ? 1 : 0, on: db)
            let rows = try ItemTable.rowsToUpdate(filter, on: db)
            for row in rows {
                if rekeys {
                    // Listed under the new key now, unlisted from under the old one on commit.
                    let newValues = zip(lead, row.lookupValues).map { attribute, old in
                        changes.attributes[attribute].map { $0.map(ItemTable.sqlValue) ?? .null } ?? old
                    }
                    let oldKey = ItemLookupMap.Key(filter.itemClass, row.lookupValues)
                    let newKey = ItemLookupMap.Key(filter.itemClass, newValues)
                    if newKey != oldKey {
                        list(ItemLookupMap.Entry(key: newKey, seq: row.seq))
                        unlisted.insert(ItemLookupMap.Entry(key: oldKey, seq: row.seq))
                    }
                }
                guard let ref = PersistentRef(row.persistentRef) else { throw KeychainError.decode("bad persistent reference") }
                let change = try plan.change(
                    of: ItemUpdatePlan.Row(
                        persistentRef: ref, accessGroup: row.accessGroup, modificationDate: row.modificationDate,
                        sealedSecret: row.sealedSecret, attributes: row.attributes),
                    keyring: keyring, usage: &usage, seal: { try keyring.seal($0, binding: $1, on: db) })
                try ItemTable.update(
                    row.seq, attributes: plan.changedAttributes, modificationDate: change.modificationDate,
                    sealedSecret: change.sealedSecret, on: db)
            }
            return rows.count
        }
    }

    func delete(_ filter: ItemFilter) throws -> Int {
        try run {
            let deleted = try ItemTable.delete(filter, on: db)
            for row in deleted {
                unlisted.insert(row.entry)
                usage.recordDeleted(from: row.accessGroup, attributes: row.attributes, sealedBytes: row.sealedBytes)
            }
            return deleted.count
        }
    }

    // MARK: KV

    func kvMetadata(of key: KVSecretKey) throws -> KVMetadata? {
        try run { try Self.kvMetadata(of: key, keyring: keyring, on: db) }
    }

    func kvVersions(of key: KVSecretKey) throws -> [KVVersion] {
        try run { try KVTable.versions(of: key, on: db) }
    }

    func kvVersion(_ number: Int, of key: KVSecretKey) throws -> KVVersion? {
        try run { try Self.kvVersion(number, of: key, keyring: keyring, on: db) }
    }

    func kvPaths(in group: String, prefix: String) throws -> [String] {
        try run { try KVTable.paths(in: group, prefix: prefix, on: db) }
    }

    func kvPutMetadata(_ metadata: KVMetadata, of key: KVSecretKey) throws {
        try run { try putMetadata(metadata, of: key) }
    }

    func kvPutVersion(_ version: KVVersion, of key: KVSecretKey) throws {
        try run { try putVersion(version, of: key) }
    }

    /// A new version that becomes the head is written with the metadata in one row write (a new
    /// secret: one insert); any other version as the two operations write it.
    func kvPutMetadata(_ metadata: KVMetadata, andVersion version: KVVersion, of key: KVSecretKey) throws {
        try run {
            let place = try KVTable.place(ofVersion: version.number, of: key, on: db)
            guard case .head(let displacesHead) = place?.target ?? .head(displacesHead: false), place?.stored == nil else {
                try putMetadata(metadata, of: key)
                try putVersion(version, of: key)
                return
            }
            let customMetadata = try sealCustomMetadata(metadata, of: key)
            let data = try sealVersion(version, of: key, replacing: nil)
            if displacesHead { try KVTable.moveHeadToHistory(of: key, on: db) }
            try KVTable.putSecret(
                metadata, sealedCustomMetadata: customMetadata, customMetadataBytes: Int64(metadata.customMetadataBytes),
                head: (version, data.box, data.bytes), of: key, on: db)
            usage.record(
                key.group,
                GroupUsage(
                    secretBytes: data.bytes,
                    attributeBytes: Int64(metadata.customMetadataBytes) - (place?.customMetadataBytes ?? 0)))
        }
    }

    /// The custom metadata is sealed again on every write (bound to the secret's row); none is
    /// stored as no box (reads open none when its bytes are 0). Its bytes move the group's
    /// attribute bytes.
    private func putMetadata(_ metadata: KVMetadata, of key: KVSecretKey) throws {
        let bytes = Int64(metadata.customMetadataBytes)
        let sealed = try sealCustomMetadata(metadata, of: key)
        let previous = try KVTable.customMetadataBytes(of: key, on: db) ?? 0
        try KVTable.putSecret(metadata, sealedCustomMetadata: sealed, customMetadataBytes: bytes, of: key, on: db)
        usage.record(key.group, GroupUsage(attributeBytes: bytes - previous))
    }

    private func putVersion(_ version: KVVersion, of key: KVSecretKey) throws {
        guard let place = try KVTable.place(ofVersion: version.number, of: key, on: db) else {
            throw KeychainError.param("KV secret \(key) has no metadata")
        }
        let data = try sealVersion(version, of: key, replacing: place.stored)
        switch place.target {
        case .head(let displacesHead):
            if displacesHead { try KVTable.moveHeadToHistory(of: key, on: db) }
            try KVTable.putHead(version, sealedData: data.box, dataBytes: data.bytes, of: key, on: db)
        case .history:
            try KVTable.putVersion(version, sealedData: data.box, dataBytes: data.bytes, of: key, on: db)
        }
        usage.record(key.group, GroupUsage(secretBytes: data.bytes - (place.stored?.bytes ?? 0)))
    }

    /// The custom metadata sealed, bound to the secret's row; no box when there is none.
    private func sealCustomMetadata(_ metadata: KVMetadata, of key: KVSecretKey) throws -> [UInt8] {
        guard metadata.customMetadataBytes > 0 else { return [] }
        try keyring.prepareForSealing(1, on: db)
        return try keyring.seal(KVCustomMetadataEncoding.encode(metadata.customMetadata), binding: .kvCustomMetadata(key), on: db)
    }

    private func sealVersion(_ version: KVVersion, of key: KVSecretKey, replacing stored: (box: [UInt8]?, bytes: Int64)?) throws
        -> (box: [UInt8]?, bytes: Int64)
    {
        try KVVersionData.toStore(version, of: key, replacing: stored) {
            try keyring.prepareForSealing(1, on: db)
            return try keyring.seal($0, binding: $1, on: db)
        }
    }

    func kvRemoveVersions(below number: Int, of key: KVSecretKey) throws -> Int {
        try run {
            let removed = try KVTable.deleteVersions(below: number, of: key, on: db)
            usage.record(key.group, GroupUsage(secretBytes: -removed.dataBytes))
            return removed.count
        }
    }

    func kvRemove(_ key: KVSecretKey) throws -> Bool {
        try run {
            let versions = try KVTable.deleteVersions(of: key, on: db)
            let customMetadataBytes = try KVTable.deleteSecret(key, on: db)
            usage.record(key.group, GroupUsage(secretBytes: -versions.dataBytes, attributeBytes: -(customMetadataBytes ?? 0)))
            return customMetadataBytes != nil
        }
    }

    /// A secret's metadata on `db`, its custom metadata opened.
    static func kvMetadata(of key: KVSecretKey, keyring: Keyring, on db: SQLiteConnection) throws -> KVMetadata? {
        try KVTable.secret(key, on: db).map {
            try keyring.openKVMetadata(
                $0.metadata, sealedCustomMetadata: $0.sealedCustomMetadata, customMetadataBytes: $0.customMetadataBytes, of: key)
        }
    }

    /// A kept version on `db`, its data opened.
    static func kvVersion(_ number: Int, of key: KVSecretKey, keyring: Keyring, on db: SQLiteConnection) throws -> KVVersion? {
        try KVTable.version(number, of: key, on: db).map { try keyring.openKVVersion($0.version, sealedData: $0.sealedData, of: key) }
    }

    // MARK: Webhooks

    func recordWebhookEvent(_ event: WebhookEvent) throws {
        try run { try WebhookTable.enqueue(event, on: db) }
    }

    private func run<T>(_ operation: () throws -> T) throws(KeychainError) -> T { try doom.run(operation) }

    /// Lists a row written in this transaction (again, if it was unlisted earlier in it).
    private func list(_ entry: ItemLookupMap.Entry) {
        lookups.add(entry.key, seq: entry.seq)
        if !unlisted.isEmpty { unlisted.remove(entry) }
    }
}
