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

    /// The items matching `filter` in creation order, at most `limit` (nil: all) after `cursor`.
    /// Secrets are loaded (and opened) only when `includeSecrets` is true.
    func find(_ filter: ItemFilter, limit: Int?, after cursor: ItemCursor?, includeSecrets: Bool) throws
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
