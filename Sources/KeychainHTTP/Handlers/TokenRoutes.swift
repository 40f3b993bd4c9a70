import KeychainAPI
import KeychainCore

extension Router {
    /// The access/refresh token convention (`api.md` "Auth tokens"):
    /// `PUT/GET/DELETE /tokens/{service}` and `GET /tokens/{service}/authorization`, each taking
    /// `?user=NAME` (the `{service}.accessToken` / account = NAME naming) and `?accessGroup=`.
    /// The rules live in Core (`TokenRequestParser`, `TokenService`).
    public mutating func addTokenRoutes(tokens: TokenService) {
        add(.put, "/tokens/{service}", access: .client) { context in
            let naming = try context.tokenNaming()
            let update = try TokenRequestParser.update(context.request.bodyFields(), now: tokens.items.clock())
            let replaced = try tokens.save(update, naming: naming, client: context.caller)
            return .json(
                .object([
                    ("status", .integer(0)), ("replaced", .integer(Int64(replaced))),
                    ("expiresAt", update.expiresAt.map { .string(RFC3339.format($0)) } ?? .null),
                ]))
        }
        add(.get, "/tokens/{service}", access: .client) { context in
            let found = try tokens.tokens(context.tokenNaming(), client: context.caller)
            return .json(
                .object([
                    ("accessToken", .string(found.accessToken)),
                    ("refreshToken", found.refreshToken.map(JSONValue.string) ?? .null),
                    ("expiresAt", found.expiresAt.map { .string(RFC3339.format($0)) } ?? .null),
                    ("expired", .bool(found.expired)),
                ]))
        }
        add(.get, "/tokens/{service}/authorization", access: .client) { context in
            let header = try tokens.authorization(context.tokenNaming(), client: context.caller)
            return .json(.object([("Authorization", .string(header))]))
        }
        add(.delete, "/tokens/{service}", access: .client) { context in
            let deleted = try tokens.delete(context.tokenNaming(), client: context.caller)
            return .json(.object([("status", .integer(0)), ("deleted", .integer(Int64(deleted)))]))
        }
    }
}

extension RequestContext {
    func tokenNaming() throws -> TokenNaming {
        try TokenRequestParser.naming(service: parameters["service"] ?? "", request.queryFields)
    }
}
