public import KeychainCore

extension ItemQuery {
    /// Decodes the query string of a CopyMatching (GET), Update (PATCH) or Delete (DELETE):
    /// attributes of the class and the control keys `operation` takes (docs/api.md, "Items").
    /// `persistentRef` is the reference in the path, if the route names one. Unknown names are
    /// errSecNoSuchAttr; bad values, conflicts and control keys of another call errSecParam.
    public init(
        decoding parameters: [QueryParameter], of itemClass: ItemClass, for operation: ItemOperation,
        persistentRef pathRef: String? = nil
    ) throws {
        self = try Self.decoded(parameters, of: itemClass, for: operation, persistentRef: pathRef)
    }

    /// The decoding, built in a local value (a delegating initializer copied the query).
    private static func decoded(
        _ parameters: [QueryParameter], of itemClass: ItemClass, for operation: ItemOperation, persistentRef pathRef: String?
    ) throws -> ItemQuery {
        var query = ItemQuery(itemClass: itemClass)
        // Sized by the specialized initializer (`reserveCapacity` runs unspecialized: ~1k instructions).
        query.attributes = .init(minimumCapacity: parameters.count)
        try ItemArguments.rejectDuplicates(parameters) { $0.name }
        var sawSecret: String?
        for parameter in parameters {
            let name = parameter.name, text = parameter.value
            if let control = ItemOperation.Control(rawValue: name) {
                if let refusal = operation.refusal(of: control) { throw refusal }
                switch control {
                case .limit: query.limit = try ItemArguments.limit(text)
                case .return:
                    let kinds = try ItemArguments.returnKinds(text)
                    if operation == .copyMatching { query.returnKinds = kinds }  // a delete's is ignored
                case .caseInsensitive: query.caseInsensitive = try ItemArguments.bool(text, name)
                case .cursor: query.cursor = PageCursor(token: text)  // opened by KeychainService
                case .all: query.deleteAll = try ItemArguments.bool(text, name)
                }
                continue
            }
            switch name {
            case "persistentRef":
                guard let ref = PersistentRef(text) else {
                    throw KeychainError.param("\"persistentRef\" is not a persistent reference")
                }
                query.persistentRef = ref
            case "value", "data":
                // kSecValueData in a query: accepted, never used for matching (§4); still checked.
                if let other = sawSecret, other != name { throw KeychainError.param("give \"value\" or \"data\", not both") }
                sawSecret = name
                if name == "data" { _ = try ItemArguments.secretBytes(name, text) }
            case "synchronizable":
                query.namesSynchronizable = true
                switch text {
                case "true": query.synchronizable = .synchronizable
                case "false": query.synchronizable = .nonSynchronizable
                case "any": query.synchronizable = .any
                default: throw KeychainError.param("\"synchronizable\" must be true, false or any")
                }
            default:
                let attribute = try ItemArguments.attribute(named: name, of: itemClass)
                query.attributes[attribute] = try attribute.value(text: text)
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

    /// The query string that decodes to this query for `operation` (the client's side): the
    /// attributes in catalogue order, then the control keys the call takes where they differ
    /// from their defaults (`return` always, for a search). A reference goes in the path, not here.
    public func queryParameters(for operation: ItemOperation) -> [QueryParameter] {
        var parameters = Attribute.all.compactMap { attribute in
            attributes[attribute].map { QueryParameter(name: attribute.name, value: $0.queryText) }
        }
        if namesSynchronizable {
            let text = switch synchronizable {
            case .synchronizable: "true"
            case .nonSynchronizable: "false"
            case .any: "any"
            }
            parameters.append(QueryParameter(name: "synchronizable", value: text))
        }
        switch operation {
        case .copyMatching:
            if caseInsensitive { parameters.append(QueryParameter(name: "caseInsensitive", value: "true")) }
            if !limit.isSingle { parameters.append(QueryParameter(name: "limit", value: ItemArguments.limitText(limit))) }
            parameters.append(QueryParameter(name: "return", value: ItemArguments.returnText(returnKinds)))
            if let cursor { parameters.append(QueryParameter(name: "cursor", value: cursor.token)) }
        case .delete:
            if deleteAll { parameters.append(QueryParameter(name: "all", value: "true")) }
        case .add, .update:
            break
        }
        return parameters
    }
}
