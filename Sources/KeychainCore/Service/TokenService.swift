public import Foundation

/// The access/refresh token convention (`api.md` "Auth tokens", seed 002) as a thin layer over
/// `KeychainService`: the tokens are ordinary generic-password items (see `TokenNaming`), seen
/// and changed through the item routes too, and isolated by the calling client's access groups.
///
/// The access token's expiry is `TokenMetadata`, kept in the item's `generic` attribute in the
/// API's format (`metadataFormat`); see docs/decisions.md.
public final class TokenService: Sendable {
    public let items: KeychainService
    private let metadataFormat: any TokenMetadataFormat

    public init(items: KeychainService, metadataFormat: any TokenMetadataFormat) {
        self.items = items
        self.metadataFormat = metadataFormat
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
            newItem(
                naming, .accessToken, update.accessToken,
                generic: update.expiresAt.map { metadataFormat.encode(TokenMetadata(expiresAt: $0)) }),
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
        let expiresAt = metadata(of: access)?.expiresAt
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
        if let expiresAt = metadata(of: access)?.expiresAt, expiresAt <= items.clock() {
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

    /// The metadata kept in an access token item's `generic`, nil when there is none.
    private func metadata(of item: Item) -> TokenMetadata? {
        guard case .data(let bytes)? = item.attributes[.generic] else { return nil }
        return metadataFormat.decode(bytes)
    }
}
