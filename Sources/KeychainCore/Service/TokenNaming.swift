/// Which generic-password items hold a service's tokens (docs/api.md, "Auth tokens"; seed 002,
/// docs/keychain-semantics.md §7):
/// service = `{service}`, account = `accessToken` / `refreshToken`; or, with a user,
/// service = `{service}.accessToken` / `{service}.refreshToken`, account = the user.
public struct TokenNaming: Sendable, Equatable {
    public var service: String
    public var user: String?
    /// Restricts the routes to one of the client's groups (and adds there); nil: the default group
    /// on add, every group of the client on search and delete.
    public var accessGroup: String?

    public init(service: String, user: String? = nil, accessGroup: String? = nil) {
        self.service = service
        self.user = user
        self.accessGroup = accessGroup
    }

    public enum Kind: String, Sendable, CaseIterable {
        case accessToken, refreshToken
    }

    /// The primary-key attributes of one of the two items.
    public func attributes(_ kind: Kind) -> [Attribute: AttributeValue] {
        var attributes: [Attribute: AttributeValue]
        if let user {
            attributes = [.service: .string("\(service).\(kind.rawValue)"), .account: .string(user)]
        } else {
            attributes = [.service: .string(service), .account: .string(kind.rawValue)]
        }
        if let accessGroup { attributes[.accessGroup] = .string(accessGroup) }
        return attributes
    }
}

extension TokenNaming {
    /// The namings whose refresh token `item` would be (the inverse of `attributes(.refreshToken)`):
    /// none for an item that is not one; two when its service and account fit both spellings.
    static func namings(ofRefreshToken item: Item) -> [TokenNaming] {
        guard item.itemClass == .genericPassword, case .string(let service)? = item[.service],
            case .string(let account)? = item[.account]
        else { return [] }
        var namings: [TokenNaming] = []
        let kind = Kind.refreshToken.rawValue
        if account.hasSameUTF8(as: kind) { namings.append(TokenNaming(service: service)) }
        let suffix = ".\(kind)".utf8
        if service.utf8.count > suffix.count, service.utf8.suffix(suffix.count).elementsEqual(suffix) {
            let base = String(decoding: service.utf8.dropLast(suffix.count), as: UTF8.self)
            namings.append(TokenNaming(service: base, user: account))
        }
        return namings
    }
}
