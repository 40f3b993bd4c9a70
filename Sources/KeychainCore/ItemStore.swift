/// Persistent storage of keychain items (Vault's `Backend`): the service layer decides what to
/// store, the store keeps it, enforces each class's primary key and answers filters.
///
/// Every method throws `KeychainError` only: `duplicateItem` on a primary-key clash (then nothing
/// was changed), `decode` when a stored secret fails authentication, `io`/`diskFull` on storage
/// failure. Implementations: `SQLiteItemStore` (sealed secrets on disk) and `InMemoryItemStore`
/// (tests); both pass the same conformance suite.
public protocol ItemStore: Sendable {
    /// Stores all of `items` in one transaction, or none of them.
    func add(_ items: [Item]) throws

    /// The items matching `filter` in creation order, at most `limit` (nil: all) after `cursor`,
    /// each with its class and persistent reference and what `contents` names: its attributes
    /// (else none), its secret opened (else nil).
    func find(_ filter: ItemFilter, limit: Int?, after cursor: ItemCursor?, reading contents: ItemContents) throws
        -> ItemPage

    /// Applies `changes` to every match in one transaction; returns how many matched (0: none, nothing changed).
    func update(_ filter: ItemFilter, with changes: ItemChanges) throws -> Int

    /// Deletes every match in one transaction; returns how many.
    func delete(_ filter: ItemFilter) throws -> Int

    /// Deletes every match of each of `filters`, then adds `items`, all in one transaction: all of
    /// it happens or none of it (a primary-key clash of an added item with what remains, or among
    /// the added items, is errSecDuplicateItem and nothing changed). Returns how many were deleted.
    /// Used where several items must change together, e.g. an access and refresh token pair.
    func replace(deleting filters: [ItemFilter], adding items: [Item]) throws -> Int

    /// How many items each stored class holds (for metrics).
    func countByClass() throws -> [ItemClass: Int]
}

/// What a find reads of each match besides its class and persistent reference. A search that
/// returns only data (`return=data`, the common read of a password) needs no attributes, and one
/// that returns only references or only checks existence needs neither: the SQLite store then
/// neither selects nor decodes those columns (docs/benchmarks.md, "Scale").
public struct ItemContents: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let attributes = ItemContents(rawValue: 1 << 0)
    /// The secret, opened.
    public static let secret = ItemContents(rawValue: 1 << 1)
    public static let all: ItemContents = [.attributes, .secret]
}
