/// The four keychain calls, for parsing what each accepts.
public enum ItemOperation: Sendable {
    case add, copyMatching, update, delete
}

/// Decodes the names and values of a request (query-string parameters or top-level JSON keys)
/// into typed queries, new items and updates: the one place where `api.md`'s spelling of
/// SecItem dictionaries is checked. Attribute names are looked up for the class:
/// unknown → errSecNoSuchAttr; bad values, conflicts, read-only attributes and control keys
/// that the call does not take → errSecParam.
public enum ItemRequestParser {
    /// Control keys a query may carry besides attributes.
    static let controlKeys: Set<String> = ["limit", "return", "caseInsensitive", "cursor", "all", "persistentRef"]
    static let secretKeys: Set<String> = ["value", "data"]

    /// A query for CopyMatching (GET), Update (PATCH query) or Delete (DELETE query).
    /// `persistentRef` is the reference from the path, if the route names one.
    public static func query(
        _ itemClass: ItemClass, _ fields: [WireValue.Field], for operation: ItemOperation,
        persistentRef pathRef: String? = nil
    ) throws -> ItemQuery {
        var query = ItemQuery(itemClass: itemClass)
        // Sized by the specialized initializer (`reserveCapacity` runs unspecialized: ~1k instructions).
        query.attributes = .init(minimumCapacity: fields.count)
        try rejectDuplicates(fields)
        var sawSecret: String?
        for field in fields {
            let name = field.name
            switch name {
            case "limit":
                guard operation == .copyMatching else { throw KeychainError.param("\"limit\" is only for a search") }
                query.limit = try parseLimit(field.value)
            case "return":
                switch operation {
                case .copyMatching: query.returnKinds = try parseReturn(field.value)
                case .delete: _ = try parseReturn(field.value)  // ignored, as securityd does
                default: throw KeychainError.param("\"return\" is not allowed here")
                }
            case "caseInsensitive":
                guard operation == .copyMatching else {
                    throw KeychainError.param("\"caseInsensitive\" is only for a search")
                }
                query.caseInsensitive = try parseBool(field.value, name)
            case "cursor":
                guard operation == .copyMatching else { throw KeychainError.param("\"cursor\" is only for a search") }
                guard let text = field.value.stringValue, let cursor = PageCursor(encoded: text) else {
                    throw KeychainError.param("\"cursor\" is not a cursor this server gave")
                }
                query.cursor = cursor
            case "all":
                guard operation == .delete else { throw KeychainError.param("\"all\" is only for a delete") }
                query.deleteAll = try parseBool(field.value, name)
            case "persistentRef":
                guard let text = field.value.stringValue else {
                    throw KeychainError.param("\"persistentRef\" must be a string")
                }
                guard let ref = PersistentRef(text) else {
                    throw KeychainError.param("\"persistentRef\" is not a persistent reference")
                }
                query.persistentRef = ref
            case "value", "data":
                // kSecValueData in a query: accepted, never used for matching (§4); still checked.
                if let other = sawSecret, other != name {
                    throw KeychainError.param("give \"value\" or \"data\", not both")
                }
                sawSecret = name
                _ = try parseSecret(name, field.value)
            case "synchronizable":
                query.namesSynchronizable = true
                switch field.value {
                case .bool(true), .text("true"): query.synchronizable = .synchronizable
                case .bool(false), .text("false"): query.synchronizable = .nonSynchronizable
                case .text("any"), .string("any"): query.synchronizable = .any
                default: throw KeychainError.param("\"synchronizable\" must be true, false or any")
                }
            default:
                let attribute = try attribute(named: name, of: itemClass)
                query.attributes[attribute] = try attribute.parse(field.value)
            }
        }
        if let pathRef {
            guard query.attributes.isEmpty, !query.namesSynchronizable, query.persistentRef == nil else {
                throw KeychainError.param("a query by persistent reference may not name attributes")
            }
            guard let ref = PersistentRef(pathRef) else {
                throw KeychainError.itemNotFound("no \(itemClass.rawValue) has this persistent reference")
            }
            query.persistentRef = ref
            // A reference names one item whatever its synchronizable flag.
            query.synchronizable = .any
        }
        return query
    }

    /// The body of an add: attributes, `value`/`data` (or `certificate` + `privateKey` for an
    /// identity) and optionally `return`.
    public static func newItem(_ itemClass: ItemClass, _ fields: [WireValue.Field]) throws -> NewItem {
        var item = NewItem(itemClass: itemClass)
        try rejectDuplicates(fields)
        var sawSecret: String?
        for field in fields {
            let name = field.name
            switch name {
            case "return":
                item.returnKinds = try parseReturn(field.value)
            case "limit", "caseInsensitive", "cursor", "all":
                throw KeychainError.param("\"\(name)\" is not allowed when adding")
            case "persistentRef":
                throw KeychainError.param("\"persistentRef\" is read-only")
            case "value" where itemClass != .identity, "data" where itemClass != .identity:
                if sawSecret != nil { throw KeychainError.param("give \"value\" or \"data\", not both") }
                sawSecret = name
                item.secret = try parseSecret(name, field.value)
            case "certificate" where itemClass == .identity:
                item.secret = try parseBytes(name, field.value)
            case "privateKey" where itemClass == .identity:
                item.privateKey = try parseBytes(name, field.value)
            case "value", "data":
                throw KeychainError.param("an identity takes \"certificate\" and \"privateKey\", not \"\(name)\"")
            case "synchronizable":
                guard case .bool(let flag) = field.value else {
                    throw KeychainError.param("\"synchronizable\" must be true or false when adding")
                }
                item.attributes[.synchronizable] = .bool(flag)
            default:
                let attribute = try attribute(named: name, of: itemClass)
                if attribute.isReadOnly { throw KeychainError.param("\"\(name)\" is read-only") }
                item.attributes[attribute] = try attribute.parse(field.value)
            }
        }
        if itemClass == .identity {
            guard item.secret != nil else { throw KeychainError.param("an identity needs \"certificate\"") }
            guard item.privateKey != nil else { throw KeychainError.param("an identity needs \"privateKey\"") }
        }
        return item
    }

    /// The body of an update: attributes of the class and `value`/`data`; any other key is
    /// errSecNoSuchAttr, a read-only attribute errSecParam.
    public static func update(_ itemClass: ItemClass, _ fields: [WireValue.Field]) throws -> ItemUpdate {
        var update = ItemUpdate()
        try rejectDuplicates(fields)
        var sawSecret: String?
        for field in fields {
            let name = field.name
            switch name {
            case "value", "data":
                if sawSecret != nil { throw KeychainError.param("give \"value\" or \"data\", not both") }
                sawSecret = name
                update.secret = try parseSecret(name, field.value)
            case "persistentRef":
                throw KeychainError.param("\"persistentRef\" is read-only")
            case "synchronizable":
                guard case .bool(let flag) = field.value else {
                    throw KeychainError.param("\"synchronizable\" must be true or false in an update")
                }
                update.attributes[.synchronizable] = .bool(flag)
            default:
                let attribute = try attribute(named: name, of: itemClass)
                if attribute.isReadOnly { throw KeychainError.param("\"\(name)\" is read-only") }
                update.attributes[attribute] = try attribute.parse(field.value)
            }
        }
        return update
    }

    // MARK: - Pieces

    /// The attribute `name` of `itemClass`, or errSecNoSuchAttr.
    public static func attribute(named name: String, of itemClass: ItemClass) throws -> Attribute {
        guard let attribute = Attribute.named(name), attribute.belongs(to: itemClass) else {
            throw KeychainError.noSuchAttr("\"\(name)\" is not an attribute of \(itemClass.rawValue)")
        }
        return attribute
    }

    public static func parseLimit(_ value: WireValue) throws -> MatchLimit {
        switch value {
        case .text("one"), .string("one"): return .one
        case .text("all"), .string("all"): return .all
        case .integer(let number) where number > 0 && number <= Int64(Int32.max): return .count(Int(number))
        case .text(let text):
            if let number = Int(text), number > 0 { return .count(number) }
        default: break
        }
        throw KeychainError.param("\"limit\" must be one, all or a positive number")
    }

    public static func parseReturn(_ value: WireValue) throws -> ReturnKinds {
        guard let text = value.stringValue else {
            throw KeychainError.param("\"return\" must be a comma list of attributes, data, ref or none")
        }
        if text == "none" { return .none }
        var kinds = ReturnKinds()
        // Split and trimmed on UTF-8 bytes, without an array of parts: every read parses this.
        var rest = Substring(text)
        while true {
            let comma = rest.utf8.firstIndex(of: UInt8(ascii: ",")) ?? rest.endIndex
            switch rest[..<comma].trimmingSpaces {
            case "attributes": kinds.insert(.attributes)
            case "data": kinds.insert(.data)
            case "ref": kinds.insert(.ref)
            default:
                throw KeychainError.param("\"return\" must be a comma list of attributes, data, ref or none")
            }
            guard comma != rest.endIndex else { return kinds }
            rest = rest[rest.utf8.index(after: comma)...]
        }
    }

    static func parseBool(_ value: WireValue, _ name: String) throws -> Bool {
        switch value {
        case .bool(let flag): return flag
        case .text("true"): return true
        case .text("false"): return false
        default: throw KeychainError.param("\"\(name)\" must be true or false")
        }
    }

    /// `value` (a UTF-8 string) or `data` (base64 bytes).
    static func parseSecret(_ name: String, _ value: WireValue) throws -> SecretBytes {
        if name == "value" {
            guard let text = value.stringValue else { throw KeychainError.param("\"value\" must be a string") }
            return SecretBytes(utf8: text)
        }
        return try parseBytes(name, value)
    }

    static func parseBytes(_ name: String, _ value: WireValue) throws -> SecretBytes {
        guard let text = value.stringValue else { throw KeychainError.param("\"\(name)\" must be a base64 string") }
        guard var bytes = Base64.decode(text) else {
            throw KeychainError.param("\"\(name)\" must be standard padded base64")
        }
        defer { SecretBytes.wipe(&bytes) }
        return SecretBytes(bytes)
    }

    /// errSecParam naming the first field whose name an earlier field has. A few fields (every
    /// request has a few) are compared pairwise, which costs less than building a set.
    static func rejectDuplicates(_ fields: [WireValue.Field]) throws {
        if fields.count <= 16 {
            for later in fields.indices.dropFirst() where fields[..<later].contains(where: { $0.name == fields[later].name }) {
                throw KeychainError.param("\"\(fields[later].name)\" is given more than once")
            }
            return
        }
        var seen = Set<String>()
        for field in fields where !seen.insert(field.name).inserted {
            throw KeychainError.param("\"\(field.name)\" is given more than once")
        }
    }
}

extension Substring {
    /// Without leading and trailing spaces (U+0020), cut on UTF-8 bytes.
    fileprivate var trimmingSpaces: Substring {
        let bytes = utf8
        guard let first = bytes.firstIndex(where: { $0 != UInt8(ascii: " ") }) else { return self[endIndex...] }
        let last = bytes.lastIndex(where: { $0 != UInt8(ascii: " ") })!
        return self[first..<bytes.index(after: last)]
    }
}
