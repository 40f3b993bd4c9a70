import KeychainAPI
public import KeychainCore

extension Router {
    /// SecItem* over HTTP (docs/api.md, "Items"):
    /// `POST/GET/PATCH/DELETE /items/{class}` and `GET/PATCH/DELETE /items/{class}/{persistentRef}`.
    /// Requests are decoded and answers written by KeychainAPI, the rules are `KeychainService`'s;
    /// this file only connects them.
    public mutating func addItemRoutes(service: KeychainService) {
        add(.post, "/items/{class}", access: .client, audit: .item) { context in
            let itemClass = try context.itemClass()
            let request = try ItemAddRequest(decoding: context.jsonBody(), of: itemClass)
            let added = try service.add(request.item, client: context.caller)
            let answer = ItemAnswer(added, returning: request.returnKinds)
            var response = HTTPResponse.json(status: 201, answer)
            response.createdItem = answer.item?.persistentRef
            return response
        }
        add(.get, "/items/{class}", access: .client, audit: .item) { context in
            try ItemHandlers.search(context, service: service, persistentRef: nil)
        }
        add(.get, "/items/{class}/{persistentRef}", access: .client, audit: .item) { context in
            try ItemHandlers.search(context, service: service, persistentRef: context.parameters["persistentRef"])
        }
        add(.patch, "/items/{class}", access: .client, audit: .item) { context in
            try ItemHandlers.update(context, service: service, persistentRef: nil)
        }
        add(.patch, "/items/{class}/{persistentRef}", access: .client, audit: .item) { context in
            try ItemHandlers.update(context, service: service, persistentRef: context.parameters["persistentRef"])
        }
        add(.delete, "/items/{class}", access: .client, audit: .item) { context in
            try ItemHandlers.delete(context, service: service, persistentRef: nil)
        }
        add(.delete, "/items/{class}/{persistentRef}", access: .client, audit: .item) { context in
            try ItemHandlers.delete(context, service: service, persistentRef: context.parameters["persistentRef"])
        }
    }
}

extension RequestContext {
    /// The class in the path, or errSecNoSuchClass.
    func itemClass() throws -> ItemClass {
        try ItemClass.named(parameters["class"] ?? "")
    }

    /// The query string as the query of `operation`.
    func itemQuery(for operation: ItemOperation, persistentRef: String?) throws -> ItemQuery {
        try ItemQuery(decoding: request.queryItems, of: itemClass(), for: operation, persistentRef: persistentRef)
    }
}

/// The search, update and delete routes, each served with and without a reference in the path.
enum ItemHandlers {
    static func search(_ context: RequestContext, service: KeychainService, persistentRef: String?) throws
        -> HTTPResponse
    {
        let query = try context.itemQuery(for: .copyMatching, persistentRef: persistentRef)
        let result = try service.copyMatching(query, client: context.caller)
        if query.returnKinds.isEmpty { return .json(ItemAnswer(item: nil)) }
        if query.limit.isSingle || persistentRef != nil, let first = result.items.first {
            return .json(ItemAnswer(first, returning: query.returnKinds))
        }
        return .json(ItemListAnswer(result, returning: query.returnKinds))
    }

    static func update(_ context: RequestContext, service: KeychainService, persistentRef: String?) throws
        -> HTTPResponse
    {
        let query = try context.itemQuery(for: .update, persistentRef: persistentRef)
        let changes = try ItemUpdate(decoding: context.jsonBody(), of: query.itemClass)
        let count = try service.update(query, with: changes, client: context.caller)
        return .json(StatusAnswer.count(.updated, count))
    }

    static func delete(_ context: RequestContext, service: KeychainService, persistentRef: String?) throws
        -> HTTPResponse
    {
        let query = try context.itemQuery(for: .delete, persistentRef: persistentRef)
        let count = try service.delete(query, client: context.caller)
        return .json(StatusAnswer.count(.deleted, count))
    }
}
