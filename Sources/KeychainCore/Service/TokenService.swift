import Foundation

/// The access/refresh token convention (`api.md` "Auth tokens", seed 002) as a thin layer over
/// `KeychainService`: the tokens are ordinary generic-password items (see `TokenNaming`), seen
/// and changed through the item routes too, and isolated by the calling client's access groups.
///
/// The access token's expiry is kept in the item's `generic` attribute (kSecAttrGeneric, Apple's
/// attribute for application-defined data) as the JSON text `{"expiresAt":"<RFC 3339>"}`; see
/// docs/decisions.md.
public final class TokenService: Sendable {
    public let items: KeychainService

    public init(items: KeychainService) {
        self.items = items
    }

    /// The stored tokens of a service.
    public struct Tokens: Sendable {
        public var accessToken: String
        public var refreshToken: String?
        public var expiresAt: Date?
        public var expired: Bool
    }

    /// Adds or replaces the tokens in one transaction; returns how many old items were replaced.
    @discardableResult
    public func save(_ update: TokenUpdate, naming: TokenNaming, client: Client) throws -> Int {
        var deleting = [query(naming, .accessToken)]
        var adding = [
            newItem(naming, .accessToken, update.accessToken, generic: update.expiresAt.map(Self.expiryData)),
        ]
        switch update.refresh {
        case .keep:
            break
        case .set(let token):
            deleting.append(query(naming, .refreshToken))
            adding.append(newItem(naming, .refreshToken, token, generic: nil))
        case .remove:
            deleting.append(query(naming, .refreshToken))
        }
        return try items.replace(deleting: deleting, adding: adding, client: client).deleted
    }

    /// Both tokens; errSecItemNotFound when no access token is stored.
    public func tokens(_ naming: TokenNaming, client: Client) throws -> Tokens {
        let access = try find(naming, .accessToken, client: client)
        let refresh: Item?
        do {
            refresh = try find(naming, .refreshToken, client: client)
        } catch let error as KeychainError where error.code == .itemNotFound {
            refresh = nil
        }
        let expiresAt = Self.expiry(of: access)
        return Tokens(
            accessToken: access.secret?.utf8String() ?? "",
            refreshToken: refresh.map { $0.secret?.utf8String() ?? "" },
            expiresAt: expiresAt,
            expired: expiresAt.map { $0 <= items.clock() } ?? false)
    }

    /// `Bearer <accessToken>`; errSecItemNotFound when none is stored, it has expired, or what is
    /// stored cannot be a bearer token: empty or not UTF-8 text (possible for an item written
    /// through the item routes; PUT refuses both). A header `Bearer ` with nothing after it is
    /// never answered. Reads the access token alone: this is the route backend services call on
    /// every request.
    public func authorization(_ naming: TokenNaming, client: Client) throws -> String {
        let access = try find(naming, .accessToken, client: client)
        if let expiresAt = Self.expiry(of: access), expiresAt <= items.clock() {
            throw KeychainError.itemNotFound(
                "the access token for \(Self.describe(naming)) expired at \(RFC3339.format(expiresAt))")
        }
        guard let secret = access.secret, !secret.isEmpty else {
            throw KeychainError.itemNotFound("the access token stored for \(Self.describe(naming)) is empty")
        }
        guard let header = secret.utf8String(after: "Bearer ") else {
            throw KeychainError.itemNotFound("the access token stored for \(Self.describe(naming)) is not UTF-8 text")
        }
        return header
    }

    /// Deletes both tokens in one transaction; returns how many; errSecItemNotFound when none.
    @discardableResult
    public func delete(_ naming: TokenNaming, client: Client) throws -> Int {
        let deleted = try items.replace(
            deleting: [query(naming, .accessToken), query(naming, .refreshToken)], adding: [], client: client
        ).deleted
        guard deleted > 0 else { throw KeychainError.itemNotFound("no tokens stored for \(Self.describe(naming))") }
        return deleted
    }

    // MARK: - Pieces

    private func query(_ naming: TokenNaming, _ kind: TokenNaming.Kind) -> ItemQuery {
        ItemQuery(
            itemClass: .genericPassword, attributes: naming.attributes(kind), limit: .one,
            returnKinds: [.attributes, .data])
    }

    private func newItem(_ naming: TokenNaming, _ kind: TokenNaming.Kind, _ token: String, generic: [UInt8]?) -> NewItem {
        var attributes = naming.attributes(kind)
        if let generic { attributes[.generic] = .data(generic) }
        return NewItem(itemClass: .genericPassword, attributes: attributes, secret: SecretBytes(utf8: token))
    }

    private func find(_ naming: TokenNaming, _ kind: TokenNaming.Kind, client: Client) throws -> Item {
        do {
            guard let found = try items.copyMatching(query(naming, kind), client: client).items.first else {
                throw KeychainError.itemNotFound()
            }
            return found.item
        } catch let error as KeychainError where error.code == .itemNotFound {
            throw KeychainError.itemNotFound("no \(kind.rawValue) stored for \(Self.describe(naming))")
        }
    }

    private static func describe(_ naming: TokenNaming) -> String {
        if let user = naming.user { return "service \"\(naming.service)\" and user \"\(user)\"" }
        return "service \"\(naming.service)\""
    }

    static let expiryPrefix = "{\"expiresAt\":\""
    static let expirySuffix = "\"}"
    /// Skipped before the prefix, as the `String(bytes:encoding: .utf8)` this once went through did.
    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// `{"expiresAt":"2026-11-21T10:00:00.123Z"}` as UTF-8 bytes.
    static func expiryData(_ date: Date) -> [UInt8] {
        Array((expiryPrefix + RFC3339.format(date) + expirySuffix).utf8)
    }

    /// The expiry kept in an access token item's `generic`, nil when there is none (or the
    /// attribute holds something else, e.g. an item added through the item routes). Read from the
    /// bytes in place: this runs on every token fetch.
    static func expiry(of item: Item) -> Date? {
        guard case .data(let bytes)? = item.attributes[.generic] else { return nil }
        return bytes.withUnsafeBufferPointer { all in
            var text = all[...]
            if text.starts(with: byteOrderMark) { text = text.dropFirst(byteOrderMark.count) }
            let prefix = expiryPrefix.utf8, suffix = expirySuffix.utf8
            guard text.count >= prefix.count + suffix.count, text.starts(with: prefix),
                text.suffix(suffix.count).elementsEqual(suffix)
            else { return nil }
            return RFC3339.parse(utf8: UnsafeBufferPointer(rebasing: text.dropFirst(prefix.count).dropLast(suffix.count)))
        }
    }
}
