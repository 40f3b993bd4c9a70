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

    /// The answer object for the requested return kinds (`api.md` "Items"):
    /// attributes → every stored attribute in catalogue order plus `persistentRef`;
    /// ref → `persistentRef`; data → `data` (base64) and `value` when the bytes are UTF-8.
    /// An identity answers its certificate's attributes, `key` (the private key's attributes)
    /// and, for data, `certificate` and `privateKey` (base64), the names its add takes.
    public func answer(returning kinds: ReturnKinds) -> [WireValue.Field] {
        var fields: [WireValue.Field] = []
        if kinds.contains(.attributes) {
            fields += Self.attributeFields(of: item)
        } else if kinds.contains(.ref) {
            fields.append(.init("persistentRef", .string(item.persistentRef.rawValue)))
        }
        if let key, kinds.contains(.attributes) {
            fields.append(.init("key", .object(Self.attributeFields(of: key))))
        }
        if kinds.contains(.data) {
            if let key {
                fields.append(.init("certificate", .string(Base64.encode(item.secret?.copyBytes() ?? []))))
                fields.append(.init("privateKey", .string(Base64.encode(key.secret?.copyBytes() ?? []))))
            } else {
                let secret = item.secret ?? SecretBytes([UInt8]())
                fields.append(.init("data", .string(secret.withUnsafeBytes { Base64.encode($0) })))
                if let text = secret.utf8String() { fields.append(.init("value", .string(text))) }
            }
        }
        return fields
    }

    static func attributeFields(of item: Item) -> [WireValue.Field] {
        var fields = Attribute.all.compactMap { attribute -> WireValue.Field? in
            item.attributes[attribute].map { .init(attribute.name, $0.wireValue) }
        }
        fields.append(.init("persistentRef", .string(item.persistentRef.rawValue)))
        return fields
    }
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
