public import KeychainCore

/// The body of `POST /admin/clients`: `{"name", "accessGroups", ["role"]}`. Unknown keys and
/// wrong types are errSecParam.
public struct ClientCreateRequest: Sendable {
    public var name: String
    public var accessGroups: [String]
    public var role: Client.Role

    public init(decoding body: JSONBody) throws {
        var name: String?
        var accessGroups: [String]?
        role = .client
        for (key, value) in body.members {
            switch key {
            case "name":
                guard let text = value.stringValue, Client.isValidName(text) else {
                    throw KeychainError.param("\"name\" must be 1-128 characters of letters, digits, . _ -")
                }
                name = text
            case "accessGroups":
                guard case .array(let values) = value else {
                    throw KeychainError.param("\"accessGroups\" must be an array of strings")
                }
                let groups = try values.map { value in
                    guard let group = value.stringValue, !group.isEmpty else {
                        throw KeychainError.param("\"accessGroups\" must be an array of non-empty strings")
                    }
                    guard Client.isValidAccessGroup(group) else {
                        throw KeychainError.param("\"accessGroups\" must be in Unicode NFC (precomposed)")
                    }
                    return group
                }
                if groups.contains(RefreshSettingStore.accessGroup) {
                    throw KeychainError.param(
                        "\"accessGroups\" names \(RefreshSettingStore.accessGroup), the group keychaind keeps refresh settings in")
                }
                guard Set(groups).count == groups.count else {
                    throw KeychainError.param("\"accessGroups\" names a group twice")
                }
                accessGroups = groups
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
    }
}
