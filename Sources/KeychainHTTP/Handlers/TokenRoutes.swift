import Foundation
import KeychainAPI
public import KeychainCore

extension Router {
    /// The access/refresh token convention (docs/api.md, "Auth tokens"):
    /// `PUT/GET/DELETE /tokens/{service}` and `GET /tokens/{service}/authorization`, each taking
    /// `?user=NAME` (the `{service}.accessToken` / account = NAME naming) and `?accessGroup=`.
    /// Requests and answers are KeychainAPI's, the rules `TokenService`'s. With a `refresher`,
    /// also `PUT/GET/POST/DELETE /tokens/{service}/refresh` (docs/api.md, "Keeping tokens fresh").
    public mutating func addTokenRoutes(tokens: TokenService, refresher: (any TokenRefreshing)? = nil) {
        add(.put, "/tokens/{service}", access: .client, audit: .pathParameters) { context in
            let naming = try context.tokenNaming()
            let update = try TokenPutRequest(decoding: context.jsonBody()).update(now: tokens.items.clock())
            let saved = try tokens.save(update, naming: naming, client: context.caller)
            return .json(StatusAnswer.tokensSaved(replaced: saved.replaced, expiresAt: update.expiresAt))
        }
        add(.get, "/tokens/{service}", access: .client, audit: .pathParameters) { context in
            .json(TokensAnswer(try tokens.tokens(context.tokenNaming(), client: context.caller, wait: context.exchangeWait)))
        }
        add(.get, "/tokens/{service}/authorization", access: .client, audit: .pathParameters) { context in
            let authorization = try tokens.authorization(
                context.tokenNaming(), client: context.caller, wait: context.exchangeWait)
            var response = HTTPResponse.json(AuthorizationAnswer(header: authorization.header))
            if let seconds = authorization.freshForSeconds {
                response.headers.append((AuthorizationAnswer.freshForHeader, String(seconds)))
            }
            return response
        }
        add(.delete, "/tokens/{service}", access: .client, audit: .pathParameters) { context in
            .json(StatusAnswer.count(.deleted, try tokens.delete(context.tokenNaming(), client: context.caller)))
        }
        if let refresher { addRefreshRoutes(refresher: refresher, clock: tokens.items.clock) }
    }

    /// The refresh setting of a service's tokens. Creating, replacing and removing one is for
    /// admin clients only (it makes the server call out to a URL); reading it and asking for a
    /// refresh now, for any client with the tokens' group. No answer carries the client secret.
    private mutating func addRefreshRoutes(refresher: any TokenRefreshing, clock: @escaping @Sendable () -> Date) {
        add(.put, "/tokens/{service}/refresh", access: .admin, audit: .pathParameters) { context in
            let naming = try context.tokenNaming()
            let setting = try RefreshPutRequest(decoding: context.jsonBody(), provider: refresher.provider(named:)).setting
            return .json(RefreshAnswer(try refresher.configure(setting, for: context.refreshKeyToAdd(naming))))
        }
        add(.get, "/tokens/{service}/refresh", access: .client, audit: .pathParameters) { context in
            .json(RefreshAnswer(try context.storedRefresh(refresher)))
        }
        add(.post, "/tokens/{service}/refresh", access: .client, audit: .pathParameters) { context in
            // A client may not make keychaind call a provider that refused the grant or is within
            // its backoff (any client could get the app rate-limited): it gets the record as it
            // is. An admin forces the call.
            let stored = try context.storedRefresh(refresher)
            if context.caller.role != .admin, stored.state.holdsOffCalls(at: clock()) { return .json(RefreshAnswer(stored)) }
            return .json(RefreshAnswer(try refresher.refreshNow(stored.key, wait: context.exchangeWait)))
        }
        add(.delete, "/tokens/{service}/refresh", access: .admin, audit: .pathParameters) { context in
            .json(StatusAnswer.count(.deleted, try refresher.removeSetting(context.storedRefresh(refresher).key)))
        }
    }
}

extension RequestContext {
    func tokenNaming() throws -> TokenNaming {
        try TokenNaming(service: parameters["service"] ?? "", decoding: request.queryItems)
    }

    /// Where a new setting goes: the tokens in `?accessGroup=` (one of the caller's groups) or
    /// in the caller's first group, as a token PUT adds them.
    func refreshKeyToAdd(_ naming: TokenNaming) throws -> RefreshKey {
        guard let group = naming.accessGroup ?? caller.accessGroups.first else {
            throw KeychainError.missingEntitlement("client \"\(caller.name)\" has no access groups")
        }
        guard caller.accessGroups.contains(group) else {
            throw KeychainError.missingEntitlement("this client may not use access group \"\(group)\"")
        }
        return RefreshKey(service: naming.service, user: naming.user, group: group)
    }

    /// The setting the path and query name, looked for in `?accessGroup=` or in each of the
    /// caller's groups; errSecItemNotFound when there is none.
    func storedRefresh(_ refresher: any TokenRefreshing) throws -> RefreshRecord {
        let naming = try tokenNaming()
        if let group = naming.accessGroup, !caller.accessGroups.contains(group) {
            throw KeychainError.missingEntitlement("this client may not use access group \"\(group)\"")
        }
        for group in naming.accessGroup.map({ [$0] }) ?? caller.accessGroups {
            if let record = try refresher.record(RefreshKey(service: naming.service, user: naming.user, group: group)) {
                return record
            }
        }
        let user = naming.user.map { " and user \"\($0)\"" } ?? ""
        throw KeychainError.itemNotFound("no refresh setting for service \"\(naming.service)\"\(user)")
    }
}
