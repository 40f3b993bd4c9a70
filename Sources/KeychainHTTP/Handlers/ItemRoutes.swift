import KeychainAPI
import KeychainCore

extension Router {
    /// SecItem* over HTTP (`api.md` "Items"):
    /// `POST/GET/PATCH/DELETE /items/{class}` and `GET/PATCH/DELETE /items/{class}/{persistentRef}`.
    /// Parsing and semantics live in Core (`ItemRequestParser`, `KeychainService`); this file only
    /// moves JSON and query strings in and answers out.
    public mutating func addItemRoutes(service: KeychainService) {
        add(.post, "/items/{class}", access: .client) { context in
            let itemClass = try context.itemClass()
            let request = try ItemRequestParser.newItem(itemClass, context.request.bodyFields())
            let added = try service.add(request, client: context.caller)
            return .json(status: 201, ItemAnswers.single(added, returning: request.returnKinds))
        }
        add(.get, "/items/{class}", access: .client) { context in
            try ItemAnswers.search(context, service: service, persistentRef: nil)
        }
        add(.get, "/items/{class}/{persistentRef}", access: .client) { context in
            try ItemAnswers.search(context, service: service, persistentRef: context.parameters["persistentRef"])
        }
        add(.patch, "/items/{class}", access: .client) { context in
            try ItemAnswers.update(context, service: service, persistentRef: nil)
        }
        add(.patch, "/items/{class}/{persistentRef}", access: .client) { context in
            try ItemAnswers.update(context, service: service, persistentRef: context.parameters["persistentRef"])
        }
        add(.delete, "/items/{class}", access: .client) { context in
            try ItemAnswers.delete(context, service: service, persistentRef: nil)
        }
        add(.delete, "/items/{class}/{persistentRef}", access: .client) { context in
            try ItemAnswers.delete(context, service: service, persistentRef: context.parameters["persistentRef"])
        }
    }
}

extension RequestContext {
    /// The class in the path, or errSecNoSuchClass.
    func itemClass() throws -> ItemClass {
        try ItemClass.named(parameters["class"] ?? "")
    }
}

enum ItemAnswers {
    static func search(_ context: RequestContext, service: KeychainService, persistentRef: String?) throws
        -> HTTPResponse
    {
        let itemClass = try context.itemClass()
        let query = try ItemRequestParser.query(
            itemClass, context.request.queryFields, for: .copyMatching, persistentRef: persistentRef)
        let result = try service.copyMatching(query, client: context.caller)
        if query.returnKinds.isEmpty { return .json(.object([("status", .integer(0))])) }
        if query.limit.isSingle || persistentRef != nil, let first = result.items.first {
            return .json(single(first, returning: query.returnKinds))
        }
        var members: [(String, JSONValue)] = [
            ("status", .integer(0)),
            ("items", .array(result.items.map { JSONValue(fields: $0.answer(returning: query.returnKinds)) })),
        ]
        if let next = result.next { members.append(("next", .string(next.encoded))) }
        return .json(.object(members))
    }

    static func update(_ context: RequestContext, service: KeychainService, persistentRef: String?) throws
        -> HTTPResponse
    {
        let itemClass = try context.itemClass()
        let query = try ItemRequestParser.query(
            itemClass, context.request.queryFields, for: .update, persistentRef: persistentRef)
        let changes = try ItemRequestParser.update(itemClass, context.request.bodyFields())
        let count = try service.update(query, with: changes, client: context.caller)
        return .json(.object([("status", .integer(0)), ("updated", .integer(Int64(count)))]))
    }

    static func delete(_ context: RequestContext, service: KeychainService, persistentRef: String?) throws
        -> HTTPResponse
    {
        let itemClass = try context.itemClass()
        let query = try ItemRequestParser.query(
            itemClass, context.request.queryFields, for: .delete, persistentRef: persistentRef)
        let count = try service.delete(query, client: context.caller)
        return .json(.object([("status", .integer(0)), ("deleted", .integer(Int64(count)))]))
    }

    /// `{"status":0,"item":{…}}`, or `{"status":0}` when nothing is to be returned.
    static func single(_ item: FoundItem, returning kinds: ReturnKinds) -> JSONValue {
        if kinds.isEmpty { return .object([("status", .integer(0))]) }
        return .object([("status", .integer(0)), ("item", JSONValue(fields: item.answer(returning: kinds)))])
    }
}
