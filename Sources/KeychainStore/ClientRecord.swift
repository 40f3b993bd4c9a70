import Foundation
package import KeychainCore

/// A client's stored columns, as both backends keep them: access groups as a JSON array, the
/// role by name, the creation time in milliseconds, its tokens' lifetime in seconds (both or
/// neither).
package enum ClientRecord {
    /// Access groups as stored (a JSON array), on either backend.
    package static func encode(_ groups: [String]) throws -> String {
        String(decoding: try JSONEncoder().encode(groups), as: UTF8.self)
    }

    /// Access groups from their stored JSON array.
    package static func decodeGroups(_ json: String) throws -> [String] {
        guard let groups = try? JSONDecoder().decode([String].self, from: Data(json.utf8)) else {
            throw KeychainError.decode("a stored access group list is malformed")
        }
        return groups
    }

    /// A client from its stored columns, on either backend.
    package static func client(
        name: String, groupsJSON: String, role: String, createdMilliseconds: Int64, tokenTTL: Int64?, tokenMaxTTL: Int64?
    ) throws -> Client {
        guard let role = Client.Role(rawValue: role) else { throw KeychainError.decode("a stored client record is malformed") }
        let lifetime = tokenTTL.map { TokenLifetime(ttlSeconds: $0, maxTTLSeconds: tokenMaxTTL ?? TokenLifetime.defaultMaxTTLSeconds) }
        return Client(
            name: name, accessGroups: try decodeGroups(groupsJSON), role: role,
            createdAt: Date(millisecondsSince1970: createdMilliseconds), tokenLifetime: lifetime)
    }
}

/// A token's stored columns (the `tokens` table), as both backends keep them: times in
/// milliseconds, the TTL in seconds, a login token's groups as a JSON array.
package struct StoredToken {
    package var accessor: String
    package var client: String?
    package var loginRole: String?
    package var subject: String?
    package var loginGroupsJSON: String?
    package var issued: Int64
    package var expires: Int64?
    package var maxExpires: Int64?
    package var ttl: Int64?
    package var lastRenewal: Int64?

    package init(
        accessor: String, client: String?, loginRole: String?, subject: String?, loginGroupsJSON: String?, issued: Int64,
        expires: Int64?, maxExpires: Int64?, ttl: Int64?, lastRenewal: Int64?
    ) {
        self.accessor = accessor
        self.client = client
        self.loginRole = loginRole
        self.subject = subject
        self.loginGroupsJSON = loginGroupsJSON
        self.issued = issued
        self.expires = expires
        self.maxExpires = maxExpires
        self.ttl = ttl
        self.lastRenewal = lastRenewal
    }

    /// The columns of `token`; `loginGroups` for a login token.
    package init(_ token: TokenRecord, loginGroups: [String]?) throws {
        var client: String?
        var loginRole: String?
        switch token.source {
        case .client(let name): client = name
        case .login(let role): loginRole = role
        }
        self.init(
            accessor: token.accessor, client: client, loginRole: loginRole, subject: token.subject,
            loginGroupsJSON: try loginGroups.map(ClientRecord.encode), issued: token.issuedAt.millisecondsSince1970,
            expires: token.expiresAt?.millisecondsSince1970, maxExpires: token.maxExpiresAt?.millisecondsSince1970,
            ttl: token.ttlSeconds, lastRenewal: token.lastRenewal?.millisecondsSince1970)
    }

    package func record() throws -> TokenRecord {
        let source: TokenRecord.Source
        if let client, loginRole == nil {
            source = .client(client)
        } else if let loginRole, client == nil {
            source = .login(role: loginRole)
        } else {
            throw KeychainError.decode("a stored token record is malformed")
        }
        return TokenRecord(
            accessor: accessor, source: source, subject: subject, issuedAt: Date(millisecondsSince1970: issued),
            expiresAt: expires.map(Date.init(millisecondsSince1970:)),
            maxExpiresAt: maxExpires.map(Date.init(millisecondsSince1970:)), ttlSeconds: ttl,
            lastRenewal: lastRenewal.map(Date.init(millisecondsSince1970:)))
    }

    /// Its holder: `client` (the row joined) for a client's token, one made of the token's own
    /// groups for a login token; nil when a client's token has lost its client.
    package func holder(client: Client?) throws -> TokenHolder? {
        let token = try record()
        switch token.source {
        case .client:
            return client.map { TokenHolder(client: $0, token: token) }
        case .login:
            guard let loginGroupsJSON else { throw KeychainError.decode("a stored token record is malformed") }
            let holder = Client(
                name: token.holderName, accessGroups: try ClientRecord.decodeGroups(loginGroupsJSON), role: .client,
                createdAt: token.issuedAt)
            return TokenHolder(client: holder, token: token)
        }
    }
}
