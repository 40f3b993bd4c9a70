public import KeychainCore

/// The body of `POST /admin/clients`: `{"name", "accessGroups", ["role"], ["ttl"], ["maxTtl"]}`
/// (`ttl`, `maxTtl` in seconds: tokens that expire and renew up to `maxTtl` from issue, 32 days
/// when not given). Unknown keys and wrong types are errSecParam.
public struct ClientCreateRequest: Sendable {
    public var name: String
    public var accessGroups: [String]
    public var role: Client.Role
    public var tokenLifetime: TokenLifetime?

    public init(decoding body: JSONBody) throws {
        var name: String?
        var accessGroups: [String]?
        var ttl: Int64?
        var maxTTL: Int64?
        role = .client
        for (key, value) in body.members {
            switch key {
            case "name":
                guard let text = value.stringValue, Client.isValidName(text) else {
                    throw KeychainError.param("\"name\" must be 1-128 characters of letters, digits, . _ -")
                }
                name = text
            case "accessGroups":
                accessGroups = try AccessGroupList.parse(value, key: "accessGroups")
            case "ttl":
                ttl = try DurationSeconds.parse(value, key: "ttl", allowText: false)
            case "maxTtl":
                maxTTL = try DurationSeconds.parse(value, key: "maxTtl", allowText: false)
            case "role":
                guard let text = value.stringValue, let parsed = Client.Role(rawValue: text) else {
                    throw KeychainError.param("\"role\" must be client or admin")
                }
                role = parsed
            default:
                throw KeychainError.param("unknown key \"\(key)\"")
            }
        }
        guard let name else { throw KeychainError.param("\"name\" is required") }
        guard let accessGroups else { throw KeychainError.param("\"accessGroups\" is required") }
        self.name = name
        self.accessGroups = accessGroups
        switch (ttl, maxTTL) {
        case (nil, nil):
            tokenLifetime = nil
        case (nil, .some):
            throw KeychainError.param("\"maxTtl\" needs \"ttl\": a token without ttl never expires")
        case (let ttl?, let maxTTL):
            let cap = maxTTL ?? max(ttl, TokenLifetime.defaultMaxTTLSeconds)
            guard cap >= ttl else { throw KeychainError.param("\"maxTtl\" must be at least \"ttl\"") }
            tokenLifetime = TokenLifetime(ttlSeconds: ttl, maxTTLSeconds: cap)
        }
    }
}

/// A list of access groups a client or a login role is given: non-empty NFC names, none twice,
/// none of keychaind's own (`keychaind.` is reserved: `keychaind.refresh` holds refresh settings).
public enum AccessGroupList {
    public static let reservedPrefix = "keychaind."

    public static func parse(_ value: JSONValue, key: String) throws -> [String] {
        guard case .array(let values) = value else {
            throw KeychainError.param("\"\(key)\" must be an array of strings")
        }
        let groups = try values.map { value in
            guard let group = value.stringValue, !group.isEmpty else {
                throw KeychainError.param("\"\(key)\" must be an array of non-empty strings")
            }
            guard Client.isValidAccessGroup(group) else {
                throw KeychainError.param("\"\(key)\" must be in Unicode NFC (precomposed)")
            }
            guard !group.hasPrefix(reservedPrefix) else {
                throw KeychainError.param(
                    "\"\(key)\" names \(group): groups beginning \(reservedPrefix) are keychaind's own (\(RefreshSettingStore.accessGroup) keeps refresh settings)")
            }
            return group
        }
        guard !groups.isEmpty else { throw KeychainError.param("\"\(key)\" must name at least one group") }
        guard Set(groups).count == groups.count else {
            throw KeychainError.param("\"\(key)\" names a group twice")
        }
        return groups
    }
}
