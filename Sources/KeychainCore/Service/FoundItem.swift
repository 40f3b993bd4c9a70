/// One result of a search or add: a stored item, or for an identity its certificate joined with
/// the private key.
public struct FoundItem: Sendable {
    public let itemClass: ItemClass
    /// The item; for an identity, its certificate (whose persistent reference is the identity's).
    public let item: Item
    /// For an identity: its private key.
    public let key: Item?

    public init(item: Item) {
        itemClass = item.itemClass
        self.item = item
        key = nil
    }

    public init(identityCertificate certificate: Item, key: Item) {
        itemClass = .identity
        item = certificate
        self.key = key
    }

    public var persistentRef: PersistentRef { item.persistentRef }
}

/// A CopyMatching answer: the page of results in creation order and, when more match, the
/// cursor for the next page.
public struct MatchResult: Sendable {
    public var items: [FoundItem]
    public var next: PageCursor?

    public init(items: [FoundItem], next: PageCursor?) {
        self.items = items
        self.next = next
    }
}
