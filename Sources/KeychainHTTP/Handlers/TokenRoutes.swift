import KeychainAPI
public import KeychainCore

extension Router {
    /// The access/refresh token convention (`api.md` "Auth tokens"):
    /// `PUT/GET/DELETE /tokens/{service}` and `GET /tokens/{service}/authorization`, each taking
    /// `?user=NAME` (the `{service}.accessToken` / account = NAME naming) and `?accessGroup=`.
    /// Requests and answers are KeychainAPI's, the rules `TokenService`'s.
    public mutating func addTokenRoutes(tokens: TokenService) {
        add(.put, "/tokens/{service}", access: .client, audit: .pathParameters) { context in
            let naming = try context.tokenNaming()
            let update = try TokenPutRequest(decoding: context.jsonBody()).update(now: tokens.items.clock())
            let replaced = try tokens.save(update, naming: naming, client: context.caller)
            return .json(StatusAnswer.tokensSaved(replaced: replaced, expiresAt: update.expiresAt))
        }
        add(.get, "/tokens/{service}", access: .client, audit: .pathParameters) { context in
            .json(TokensAnswer(try tokens.tokens(context.tokenNaming(), client: context.caller)))
        }
        add(.get, "/tokens/{service}/authorization", access: .client, audit: .pathParameters) { context in
            .json(AuthorizationAnswer(header: try tokens.authorization(context.tokenNaming(), client: context.caller)))
        }
        add(.delete, "/tokens/{service}", access: .client, audit: .pathParameters) { context in
            .json(StatusAnswer.count(.deleted, try tokens.delete(context.tokenNaming(), client: context.caller)))
        }
    }
}

extension RequestContext {
    func tokenNaming() throws -> TokenNaming {
        try TokenNaming(service: parameters["service"] ?? "", decoding: request.queryItems)
    }
}
