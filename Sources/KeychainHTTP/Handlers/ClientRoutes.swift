public import Foundation
import KeychainAPI
public import KeychainCore

extension Router {
    /// Client administration (admin clients only): create with a token shown once, list (never
    /// tokens), revoke, and reissue a token (revoking the old ones). A client made with `ttl`
    /// gets tokens that expire, and so does each token reissued to it; `requireUpgradedCluster`
    /// refuses that while an older node (which could not expire them) is live.
    public mutating func addClientRoutes(
        clients: any ClientStore, tokens: any ClientTokenIssuer,
        requireUpgradedCluster: @escaping @Sendable () throws -> Void = {},
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        /// Checks a token about to be issued to `client` may expire.
        @Sendable func checkLifetime(of client: Client) throws {
            guard client.tokenLifetime != nil else { return }
            try requireUpgradedCluster()
            if client.role == .admin, try !clients.adminHasTokenWithoutExpiry() {
                throw KeychainError.param(
                    "an admin token may carry a ttl only while an admin holds a token that never expires (the last admin cannot be locked out)")
            }
        }
        add(.post, "/admin/clients", access: .admin, audit: .none) { context in
            let request = try ClientCreateRequest(decoding: context.jsonBody())
            let now = clock()
            let client = Client(
                name: request.name, accessGroups: request.accessGroups, role: request.role,
                createdAt: now.truncatedToMilliseconds, tokenLifetime: request.tokenLifetime)
            try checkLifetime(of: client)
            let (token, new) = tokens.issue(for: .client(client.name), lifetime: client.tokenLifetime, now: now)
            try clients.addClient(client, token: new)
            return .json(status: 201, StatusAnswer.clientCreated(client, token: token, record: new.record))
        }
        add(.get, "/admin/clients", access: .admin, audit: .none) { _ in
            .json(StatusAnswer.clients(try clients.clients()))
        }
        add(.delete, "/admin/clients/{name}", access: .admin, audit: .client) { context in
            let name = context.parameters["name"] ?? ""
            // The store refuses the last admin (errSecParam) in the same step as the removal.
            guard try clients.removeClient(named: name, now: clock()) else {
                throw KeychainError.itemNotFound("no client named \"\(name)\"")
            }
            return .json(StatusAnswer.count(.deleted, 1))
        }
        add(.post, "/admin/clients/{name}/token", access: .admin, audit: .client) { context in
            let name = context.parameters["name"] ?? ""
            guard let client = try clients.client(named: name) else {
                throw KeychainError.itemNotFound("no client named \"\(name)\"")
            }
            try checkLifetime(of: client)
            let (token, new) = tokens.issue(for: .client(name), lifetime: client.tokenLifetime, now: clock())
            guard try clients.replaceToken(ofClient: name, token: new) else {
                throw KeychainError.itemNotFound("no client named \"\(name)\"")
            }
            return .json(StatusAnswer.clientToken(name: name, token: token, record: new.record))
        }
    }
}
