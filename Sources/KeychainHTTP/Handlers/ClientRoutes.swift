import Foundation
import KeychainAPI
import KeychainCore

extension Router {
    /// Client administration (admin clients only): create with a token shown once, list (never
    /// tokens), revoke, and reissue a token (revoking the old one).
    public mutating func addClientRoutes(
        clients: any ClientStore, tokens: any ClientTokenIssuer, clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        add(.post, "/admin/clients", access: .admin) { context in
            let request = try NewClientRequest(context.request.jsonObjectBody())
            let client = Client(
                name: request.name, accessGroups: request.accessGroups, role: request.role,
                createdAt: clock().truncatedToMilliseconds)
            let (token, hash) = tokens.newToken()
            try clients.addClient(client, tokenHash: hash)
            return .json(status: 201, .object([("status", .integer(0))] + ClientAnswers.members(client) + [("token", .string(token))]))
        }
        add(.get, "/admin/clients", access: .admin) { _ in
            let all = try clients.clients()
            return .json(.object([
                ("status", .integer(0)), ("clients", .array(all.map { .object(ClientAnswers.members($0)) })),
            ]))
        }
        add(.delete, "/admin/clients/{name}", access: .admin) { context in
            let name = context.parameters["name"] ?? ""
            // Revoking the only admin would leave nobody able to administer the vault (and
            // admin.token would name a dead token): refuse, as a guard like DELETE's `all=true`.
            let all = try clients.clients()
            if let target = all.first(where: { $0.name == name }), target.role == .admin,
                all.count(where: { $0.role == .admin }) == 1
            {
                throw KeychainError.param("\"\(name)\" is the last admin client; create another admin first")
            }
            guard try clients.removeClient(named: name) else {
                throw KeychainError.itemNotFound("no client named \"\(name)\"")
            }
            return .json(.object([("status", .integer(0)), ("deleted", .integer(1))]))
        }
        add(.post, "/admin/clients/{name}/token", access: .admin) { context in
            let name = context.parameters["name"] ?? ""
            let (token, hash) = tokens.newToken()
            guard try clients.replaceToken(ofClient: name, tokenHash: hash) else {
                throw KeychainError.itemNotFound("no client named \"\(name)\"")
            }
            return .json(.object([("status", .integer(0)), ("name", .string(name)), ("token", .string(token))]))
        }
    }
}

enum ClientAnswers {
    static func members(_ client: Client) -> [(String, JSONValue)] {
        [
            ("name", .string(client.name)), ("accessGroups", .array(client.accessGroups.map { .string($0) })),
            ("role", .string(client.role.rawValue)), ("createdAt", .string(RFC3339.format(client.createdAt))),
        ]
    }
}

/// `{"name", "accessGroups", ["role"]}`; unknown keys and wrong types are errSecParam.
struct NewClientRequest {
    var name = ""
    var accessGroups: [String] = []
    var role = Client.Role.client

    init(_ members: [(String, JSONValue)]) throws {
        var sawName = false
        var sawGroups = false
        for (key, value) in members {
            switch key {
            case "name":
                guard let text = value.stringValue, Self.isValidName(text) else {
                    throw KeychainError.param("\"name\" must be 1-128 characters of letters, digits, . _ -")
                }
                name = text
                sawName = true
            case "accessGroups":
                guard case .array(let values) = value else {
                    throw KeychainError.param("\"accessGroups\" must be an array of strings")
                }
                accessGroups = try values.map { value in
                    guard let group = value.stringValue, !group.isEmpty else {
                        throw KeychainError.param("\"accessGroups\" must be an array of non-empty strings")
                    }
                    return group
                }
                guard Set(accessGroups).count == accessGroups.count else {
                    throw KeychainError.param("\"accessGroups\" names a group twice")
                }
                sawGroups = true
            case "role":
                guard let text = value.stringValue, let parsed = Client.Role(rawValue: text) else {
                    throw KeychainError.param("\"role\" must be client or admin")
                }
                role = parsed
            default:
                throw KeychainError.param("unknown key \"\(key)\"")
            }
        }
        guard sawName else { throw KeychainError.param("\"name\" is required") }
        guard sawGroups else { throw KeychainError.param("\"accessGroups\" is required") }
    }

    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 128
            && name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0)) }
    }
}
