public import KeychainCore

extension ItemQuery {
    /// Decodes the query string of a CopyMatching (GET), Update (PATCH) or Delete (DELETE):
    /// attributes of the class and the control keys `operation` takes (api.md "Items").
    /// `persistentRef` is the reference in the path, if the route names one. Unknown names are
    /// errSecNoSuchAttr; bad values, conflicts and control keys of another call errSecParam.
    public init(
        decoding parameters: [QueryParameter], of itemClass: ItemClass, for operation: ItemOperation,
        persistentRef pathRef: String? = nil
    ) throws {
        self.init(itemClass: itemClass)
        // Sized by the specialized initializer (`reserveCapacity` runs unspecialized: ~1k instructions).
        attributes = .init(minimumCapacity: parameters.count)
        try ItemArguments.rejectDuplicates(parameters.lazy.map(\.name))
        var sawSecret: String?
        for parameter in parameters {
            let name = parameter.name, text = parameter.value
            if let control = ItemOperation.Control(rawValue: name) {
                if let refusal = operation.refusal(of: control) { throw refusal }
                switch control {
                case .limit: limit = try ItemArguments.limit(text)
                case .return:
                    let kinds = try ItemArguments.returnKinds(text)
                    if operation == .copyMatching { returnKinds = kinds }  // a delete's is ignored
                case .caseInsensitive: caseInsensitive = try ItemArguments.bool(text, name)
                case .cursor:
                    guard let cursor = PageCursor(token: text) else {
                        throw KeychainError.param("\"cursor\" is not a cursor this server gave")
                    }
                    self.cursor = cursor
                case .all: deleteAll = try ItemArguments.bool(text, name)
                }
                continue
            }
            switch name {
            case "persistentRef":
                guard let ref = PersistentRef(text) else {
                    throw KeychainError.param("\"persistentRef\" is not a persistent reference")
                }
                persistentRef = ref
            case "value", "data":
                // kSecValueData in a query: accepted, never used for matching (§4); still checked.
                if let other = sawSecret, other != name { throw KeychainError.param("give \"value\" or \"data\", not both") }
                sawSecret = name
                if name == "data" { _ = try ItemArguments.secretBytes(name, text) }
            case "synchronizable":
                namesSynchronizable = true
                switch text {
                case "true": synchronizable = .synchronizable
                case "false": synchronizable = .nonSynchronizable
                case "any": synchronizable = .any
                default: throw KeychainError.param("\"synchronizable\" must be true, false or any")
                }
            default:
                let attribute = try ItemArguments.attribute(named: name, of: itemClass)
                attributes[attribute] = try attribute.value(text: text)
            }
        }
        if let pathRef {
            guard attributes.isEmpty, !namesSynchronizable, persistentRef == nil else {
                throw KeychainError.param("a query by persistent reference may not name attributes")
            }
            guard let ref = PersistentRef(pathRef) else {
                throw KeychainError.itemNotFound("no \(itemClass.rawValue) has this persistent reference")
            }
            persistentRef = ref
            // A reference names one item whatever its synchronizable flag.
            synchronizable = .any
        }
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
