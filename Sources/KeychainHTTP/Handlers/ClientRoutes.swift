public import Foundation
import KeychainAPI
public import KeychainCore

extension Router {
    /// Client administration (admin clients only): create with a token shown once, list (never
    /// tokens), revoke, and reissue a token (revoking the old one).
    public mutating func addClientRoutes(
        clients: any ClientStore, tokens: any ClientTokenIssuer, clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        add(.post, "/admin/clients", access: .admin, audit: .none) { context in
            let request = try ClientCreateRequest(decoding: context.jsonBody())
            let client = Client(
                name: request.name, accessGroups: request.accessGroups, role: request.role,
                createdAt: clock().truncatedToMilliseconds)
            let (token, hash) = tokens.newToken()
            try clients.addClient(client, tokenHash: hash)
            return .json(status: 201, StatusAnswer.clientCreated(client, token: token))
        }
        add(.get, "/admin/clients", access: .admin, audit: .none) { _ in
            .json(StatusAnswer.clients(try clients.clients()))
        }
        add(.delete, "/admin/clients/{name}", access: .admin, audit: .client) { context in
            let name = context.parameters["name"] ?? ""
            // Revoking the only admin would leave nobody able to administer the vault (and
            // admin.token would name a dead token): refuse, as a guard like DELETE's `all=true`.
            let all = try clients.clients()
            if let target = all.first(where: { $0.name.hasSameUTF8(as: name) }), target.role == .admin,
                all.count(where: { $0.role == .admin }) == 1
            {
                throw KeychainError.param("\"\(name)\" is the last admin client; create another admin first")
            }
            guard try clients.removeClient(named: name) else {
                throw KeychainError.itemNotFound("no client named \"\(name)\"")
            }
            return .json(StatusAnswer.count(.deleted, 1))
        }
        add(.post, "/admin/clients/{name}/token", access: .admin, audit: .client) { context in
            let name = context.parameters["name"] ?? ""
            let (token, hash) = tokens.newToken()
            guard try clients.replaceToken(ofClient: name, tokenHash: hash) else {
                throw KeychainError.itemNotFound("no client named \"\(name)\"")
            }
            return .json(StatusAnswer.clientToken(name: name, token: token))
        }
    }
}
