/// Persistent storage of keychain items (Vault's `Backend`): the service layer decides what to
/// store, the store keeps it, enforces each class's primary key and answers filters.
///
/// Every method throws `KeychainError` only: `duplicateItem` on a primary-key clash (then nothing
/// was changed), `decode` when a stored secret fails authentication, `io`/`diskFull` on storage
/// failure. Implementations: `SQLiteItemStore` (one node, sealed secrets in SQLite),
/// `PGItemStore` (several nodes, sealed secrets in PostgreSQL) and `InMemoryItemStore` (tests);
/// all pass the same conformance suite (`ItemStoreConformance`, in KeychainTestSupport).
///
/// Each operation called on the store is a transaction of its own; `transaction(_:)` runs several
/// as one.
public protocol ItemStore: ItemOperations, Sendable {
    /// Runs `body` as one transaction: the operations it calls on the transaction value it is
    /// given all take effect, or none does. Reads inside see the writes made before them in it;
    /// nothing outside sees any of them before it commits.
    ///
    /// Nothing is committed when `body` throws (its error is rethrown as it is), nor when an
    /// operation inside threw, even if `body` caught the error: the first such error dooms the
    /// transaction, later operations throw it again, and `transaction` throws it at the end.
    /// Inside `body`, use only the transaction value: a write called on the store itself waits
    /// for this transaction to end, and a read does not see it.
    func transaction<Result>(_ body: (any ItemOperations) throws -> Result) throws -> Result

    /// How many items each stored class holds (for metrics).
    func countByClass() throws -> [ItemClass: Int]
}

/// What can be done to items and KV secrets (`KVOperations`), on a store (each call its own
/// transaction) or inside `ItemStore.transaction(_:)` (all calls one transaction: a KV write and
/// an item write in one commit together or not at all). A webhook event recorded in a
/// transaction (`WebhookEventRecording`) is enqueued only if it commits.
///
/// Inside a transaction, the KV operations on one secret are serialised with every other
/// transaction's on it until commit (SQLite: one writer; PostgreSQL: a lock per secret taken by
/// the first KV operation on it), so a read, a check and a write (check-and-set) are atomic.
public protocol ItemOperations: KVOperations, WebhookEventRecording {
    /// Stores all of `items`, or none of them (a primary-key clash with a stored item or among
    /// `items` is errSecDuplicateItem).
    func add(_ items: [Item]) throws

    /// The items matching `filter` in creation order, at most `limit` (nil: all) after `cursor`,
    /// each with its class and persistent reference and what `contents` names: its attributes
    /// (else none), its secret opened (else nil). With `maxBytes`, the page also ends before the
    /// item that would take its `ItemPage.bytes(of:)` past `maxBytes` (the first item always
    /// comes, however large), and carries `next` as a page cut by `limit` does.
    func find(
        _ filter: ItemFilter, limit: Int?, after cursor: ItemCursor?, reading contents: ItemContents, maxBytes: Int?
    ) throws -> ItemPage

    /// Applies `changes` to every match, all or none; returns how many matched (0: none, nothing changed).
    func update(_ filter: ItemFilter, with changes: ItemChanges) throws -> Int

    /// Deletes every match; returns how many.
    func delete(_ filter: ItemFilter) throws -> Int
}

extension ItemOperations {
    /// A find bounded by `limit` only.
    public func find(_ filter: ItemFilter, limit: Int?, after cursor: ItemCursor?, reading contents: ItemContents) throws
        -> ItemPage
    {
        try find(filter, limit: limit, after: cursor, reading: contents, maxBytes: nil)
    }
}

extension ItemStore {
    public func add(_ items: [Item]) throws {
        guard !items.isEmpty else { return }
        try transaction { try $0.add(items) }
    }

    public func update(_ filter: ItemFilter, with changes: ItemChanges) throws -> Int {
        try transaction { try $0.update(filter, with: changes) }
    }

    public func delete(_ filter: ItemFilter) throws -> Int {
        try transaction { try $0.delete(filter) }
    }

    public func kvPutMetadata(_ metadata: KVMetadata, of key: KVSecretKey) throws {
        try transaction { try $0.kvPutMetadata(metadata, of: key) }
    }

    public func kvPutVersion(_ version: KVVersion, of key: KVSecretKey) throws {
        try transaction { try $0.kvPutVersion(version, of: key) }
    }

    @discardableResult
    public func kvRemoveVersions(below number: Int, of key: KVSecretKey) throws -> Int {
        try transaction { try $0.kvRemoveVersions(below: number, of: key) }
    }

    @discardableResult
    public func kvRemove(_ key: KVSecretKey) throws -> Bool {
        try transaction { try $0.kvRemove(key) }
    }

    public func recordWebhookEvent(_ event: WebhookEvent) throws {
        try transaction { try $0.recordWebhookEvent(event) }
    }
}

/// What a find reads of each match besides its class and persistent reference. A search that
/// returns only data (`return=data`, the common read of a password) needs no attributes, and one
/// that returns only references or only checks existence needs neither: the SQLite store then
/// neither selects nor decodes those columns (docs/decisions.md, "A find reads only what the answer returns").
public struct ItemContents: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let attributes = ItemContents(rawValue: 1 << 0)
    /// The secret, opened.
    public static let secret = ItemContents(rawValue: 1 << 1)
    public static let all: ItemContents = [.attributes, .secret]
}
