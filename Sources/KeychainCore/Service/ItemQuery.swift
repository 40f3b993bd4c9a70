/// kSecMatchLimit: `one` (the default), `all`, or at most N items. `count(1)` behaves as `one`.
public enum MatchLimit: Sendable, Equatable {
    case one
    case all
    case count(Int)

    /// Answers a single item rather than a list.
    public var isSingle: Bool { self == .one || self == .count(1) }
}

/// kSecReturnAttributes / kSecReturnData / kSecReturnPersistentRef; empty (`none`) is an existence check.
public struct ReturnKinds: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let attributes = ReturnKinds(rawValue: 1)
    public static let data = ReturnKinds(rawValue: 2)
    public static let ref = ReturnKinds(rawValue: 4)
    public static let none: ReturnKinds = []
}

/// kSecAttrSynchronizable in a query: not named sees only non-synchronizable items.
public enum SynchronizableFilter: Sendable, Equatable {
    case nonSynchronizable
    case synchronizable
    case any
}

/// A typed keychain query (the dictionary given to CopyMatching, Update or Delete, decoded once).
public struct ItemQuery: Sendable {
    public var itemClass: ItemClass
    /// Equality constraints; never holds `synchronizable` (see `synchronizable`).
    public var attributes: [Attribute: AttributeValue]
    public var synchronizable: SynchronizableFilter
    /// Whether `synchronizable` was named (it then counts as naming an attribute).
    public var namesSynchronizable: Bool
    public var limit: MatchLimit
    public var returnKinds: ReturnKinds
    public var caseInsensitive: Bool
    public var cursor: PageCursor?
    public var persistentRef: PersistentRef?
    /// `all=true` on a delete: allows a query naming no attribute.
    public var deleteAll: Bool

    public init(
        itemClass: ItemClass, attributes: [Attribute: AttributeValue] = [:],
        synchronizable: SynchronizableFilter = .nonSynchronizable, namesSynchronizable: Bool = false,
        limit: MatchLimit = .one, returnKinds: ReturnKinds = .attributes, caseInsensitive: Bool = false,
        cursor: PageCursor? = nil, persistentRef: PersistentRef? = nil, deleteAll: Bool = false
    ) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.synchronizable = synchronizable
        self.namesSynchronizable = namesSynchronizable || synchronizable != .nonSynchronizable
        self.limit = limit
        self.returnKinds = returnKinds
        self.caseInsensitive = caseInsensitive
        self.cursor = cursor
        self.persistentRef = persistentRef
        self.deleteAll = deleteAll
    }

    /// Whether the query constrains anything at all (a delete naming nothing needs `all=true`).
    public var namesAnyAttribute: Bool { !attributes.isEmpty || namesSynchronizable || persistentRef != nil }

    /// The constraints as `name="value"` pairs, for an errSecItemNotFound detail (no secrets: a
    /// query never carries one).
    var summary: String {
        var parts = Attribute.all.compactMap { attribute -> String? in
            switch attributes[attribute] {
            case .string(let text): return "\(attribute.name)=\"\(text)\""
            case .integer(let number): return "\(attribute.name)=\(number)"
            case .bool(let flag): return "\(attribute.name)=\(flag)"
            case .data, .date, nil: return nil
            }
        }
        switch synchronizable {
        case .synchronizable: parts.append("synchronizable=true")
        case .any: parts.append("synchronizable=any")
        case .nonSynchronizable: break
        }
        if let persistentRef { parts.append("persistentRef=\"\(persistentRef)\"") }
        return parts.isEmpty ? "no \(itemClass.rawValue) matches" : "no \(itemClass.rawValue) matches "
            + parts.joined(separator: " ")
    }
}

/// Where the next page of a CopyMatching answer starts, as the answer's `next` gives it and a
/// query's `cursor` gives it back: opaque, sealed by `PageCursorSeal` for one query and client.
public struct PageCursor: Sendable, Equatable {
    public let token: String

    public init(token: String) { self.token = token }
}

/// A page cursor opened: the item the next page starts after, and how many items the query's
/// numeric limit still allows (nil for `all`).
struct PagePosition: Equatable {
    var after: ItemCursor
    var remaining: Int?
}

/// The attributes and secret an update sets (SecItemUpdate's attributesToUpdate).
public struct ItemUpdate: Sendable {
    public var attributes: [Attribute: AttributeValue]
    public var secret: SecretBytes?

    public init(attributes: [Attribute: AttributeValue] = [:], secret: SecretBytes? = nil) {
        self.attributes = attributes
        self.secret = secret
    }
}

/// What SecItemAdd is given: attributes and the secret. For an identity, `secret` is the certificate's DER and `privateKey` the private key's bytes.
public struct NewItem: Sendable {
    public var itemClass: ItemClass
    public var attributes: [Attribute: AttributeValue]
    public var secret: SecretBytes?
    public var privateKey: SecretBytes?

    public init(
        itemClass: ItemClass, attributes: [Attribute: AttributeValue] = [:], secret: SecretBytes? = nil,
        privateKey: SecretBytes? = nil
    ) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.secret = secret
        self.privateKey = privateKey
    }
}
