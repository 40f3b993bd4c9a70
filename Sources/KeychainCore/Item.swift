public import Foundation

/// kSecValuePersistentRef: 128 random bits, written base64url without padding. Opaque to
/// clients, stable for the item's life, never derived from a row number.
public struct PersistentRef: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// Accepts only the form `PersistentRef.random()` produces (22 base64url characters).
    public init?(_ string: String) {
        guard string.utf8.count == 22, string.utf8.allSatisfy({ PersistentRef.isAlphabet[Int($0)] }) else {
            return nil
        }
        rawValue = string
    }

    /// A new reference: 128 bits from the system's generator (two reads of 8 bytes each), as
    /// 22 characters: the last carries 2 padding bits, as base64url of 16 bytes does.
    public static func random() -> PersistentRef {
        var generator = SystemRandomNumberGenerator()
        var bytes = (generator.next() as UInt64, generator.next() as UInt64)
        return PersistentRef(unchecked: withUnsafeBytes(of: &bytes) { Base64URL.encode($0) })
    }

    private init(unchecked: String) { rawValue = unchecked }

    public var description: String { rawValue }

    /// Whether each byte value belongs to the base64url alphabet (a table: this runs per row read).
    private static let isAlphabet: [Bool] = (0..<256).map { byte in
        Base64URL.alphabet.withUTF8Buffer { $0.contains(UInt8(byte)) }
    }
}

/// A stored keychain item: a row of a stored class (never `.identity`), its attributes (only those
/// that are set; absent primary-key attributes behave as their defaults), and its secret when the
/// caller asked the store for it.
public struct Item: Sendable {
    public let itemClass: ItemClass
    public let persistentRef: PersistentRef
    public var attributes: [Attribute: AttributeValue]
    /// The secret (kSecValueData), nil when it was not loaded.
    public var secret: SecretBytes?

    public init(
        itemClass: ItemClass, persistentRef: PersistentRef, attributes: [Attribute: AttributeValue],
        secret: SecretBytes?
    ) {
        precondition(itemClass.isStored, "an identity is not stored as one item")
        self.itemClass = itemClass
        self.persistentRef = persistentRef
        self.attributes = attributes
        self.secret = secret
    }

    public subscript(attribute: Attribute) -> AttributeValue? { attributes[attribute] }

    public var accessGroup: String {
        if case .string(let group) = attributes[.accessGroup] { return group }
        return ""
    }

    /// The value used for uniqueness and matching: the stored value, or the primary-key default.
    public func effectiveValue(of attribute: Attribute) -> AttributeValue {
        attributes[attribute] ?? .primaryKeyDefault(for: attribute.valueType)
    }

    /// The item's primary key (§2) with defaults filled in: equal keys collide.
    public var primaryKey: [AttributeValue] {
        Attribute.primaryKey(of: itemClass).map { effectiveValue(of: $0) }
    }
}

/// Which stored items a query selects: one stored class, the access groups the caller may see,
/// equality on attributes (absent attributes compare as their primary-key defaults), and
/// optionally one persistent reference.
public struct ItemFilter: Hashable, Sendable {
    public var itemClass: ItemClass
    /// Items outside these groups are invisible. Never empty (a client without groups is refused earlier).
    public var accessGroups: [String]
    public var equal: [Attribute: AttributeValue]
    /// Strings compare without regard to case (kSecMatchCaseInsensitive, honoured).
    public var caseInsensitive: Bool
    public var persistentRef: PersistentRef?

    public init(
        itemClass: ItemClass, accessGroups: [String], equal: [Attribute: AttributeValue] = [:],
        caseInsensitive: Bool = false, persistentRef: PersistentRef? = nil
    ) {
        precondition(itemClass.isStored, "filters select rows of a stored class")
        self.itemClass = itemClass
        self.accessGroups = accessGroups
        self.equal = equal
        self.caseInsensitive = caseInsensitive
        self.persistentRef = persistentRef
    }

    public func matches(_ item: Item) -> Bool {
        guard item.itemClass == itemClass, accessGroups.containsExactly(item.accessGroup) else { return false }
        if let persistentRef, item.persistentRef != persistentRef { return false }
        for (attribute, wanted) in equal
        where !item.effectiveValue(of: attribute).matches(wanted, caseInsensitive: caseInsensitive) {
            return false
        }
        return true
    }

    /// Groups compare by their bytes (`String.hasSameUTF8(as:)`): a filter of one group never
    /// stands for another's (the find caches are keyed by filters).
    public static func == (lhs: ItemFilter, rhs: ItemFilter) -> Bool {
        guard lhs.itemClass == rhs.itemClass, lhs.caseInsensitive == rhs.caseInsensitive,
            lhs.persistentRef == rhs.persistentRef, lhs.accessGroups.count == rhs.accessGroups.count
        else { return false }
        // By index: `zip` would copy both arrays (a find cache hit compares a filter).
        for index in lhs.accessGroups.indices where !lhs.accessGroups[index].hasSameUTF8(as: rhs.accessGroups[index]) {
            return false
        }
        return lhs.equal == rhs.equal
    }
}

/// Where a page of results starts: after the item with this creation sequence number.
public struct ItemCursor: Hashable, Sendable {
    public let afterSequence: Int64
    public init(afterSequence: Int64) { self.afterSequence = afterSequence }
}

/// One page of a find, in creation order.
public struct ItemPage: Sendable {
    /// What an item counts for against a page's byte bound (`ItemOperations.find`'s `maxBytes`):
    /// its secret's bytes (as stored, `secretBytes`), its attribute values' bytes (8 for a number,
    /// flag or date) and 256 for the rest (names, reference, punctuation). An answer spells each
    /// byte of these in at most a small constant number of bytes, so a bound on this bounds it.
    public static func bytes(secretBytes: Int, attributes: [Attribute: AttributeValue]) -> Int {
        256 + secretBytes + AttributeValue.storedBytes(of: attributes)
    }

    /// `bytes(secretBytes:attributes:)` of an item as found.
    public static func bytes(of item: Item) -> Int {
        bytes(secretBytes: item.secret?.count ?? 0, attributes: item.attributes)
    }

    /// How many of `sizes` (each item's `bytes`, in order) a page of at most `limit` items and
    /// `maxBytes` bytes takes: at least one when there is one.
    public static func count(of sizes: some Sequence<Int>, limit: Int?, maxBytes: Int?) -> Int {
        var count = 0
        var total = 0
        for size in sizes {
            if let limit, count >= max(0, limit) { break }
            total += size
            if let maxBytes, count > 0, total > maxBytes { break }
            count += 1
        }
        return count
    }

    public var items: [Item]
    /// Set when more items match after this page.
    public var next: ItemCursor?

    public init(items: [Item], next: ItemCursor?) {
        self.items = items
        self.next = next
    }
}

/// What an update changes: attributes (set, or removed with nil), the secret, and the new
/// modification date (the store keeps it strictly later than the old one).
public struct ItemChanges: Sendable {
    public var attributes: [Attribute: AttributeValue?]
    public var secret: SecretBytes?
    public var modificationDate: Date

    public init(attributes: [Attribute: AttributeValue?] = [:], secret: SecretBytes? = nil, modificationDate: Date) {
        self.attributes = attributes
        self.secret = secret
        self.modificationDate = modificationDate
    }
}
