public import Foundation

/// The access/refresh token convention (docs/api.md, "Auth tokens"; seed 002) as a thin layer over
/// `KeychainService`: the tokens are ordinary generic-password items (see `TokenNaming`), seen
/// and changed through the item routes too, and isolated by the calling client's access groups.
///
/// The access token's expiry is `TokenMetadata`, kept in the item's `generic` attribute in the
/// API's format (`metadataFormat`); see docs/decisions.md.
///
/// With a `refresher`, a fetch that finds the access token missing, expired or within its
/// refresh window asks it first (docs/api.md, "Keeping tokens fresh"); a token that is not due costs
/// the fetch one compare of its expiry, as without one.
public final class TokenService: Sendable {
    public let items: KeychainService
    private let metadataFormat: any TokenMetadataFormat
    private let refresher: (any TokenRefreshing)?

    public init(items: KeychainService, metadataFormat: any TokenMetadataFormat, refresher: (any TokenRefreshing)? = nil) {
        self.items = items
        self.metadataFormat = metadataFormat
        self.refresher = refresher
    }

    /// The stored tokens of a service.
    public struct Tokens: Sendable {
        public var accessToken: String
        public var refreshToken: String?
        public var expiresAt: Date?
        public var expired: Bool
        /// Seconds before `expiresAt` a refresh setting renews the token; nil without a setting.
        public var refreshBefore: Int?
        /// How many times tokens were stored under this name (`TokenMetadata.version`); nil:
        /// stored before keychaind counted.
        public var version: Int?
        /// When the access token was stored.
        public var storedAt: Date?
    }

    /// Adds or replaces the tokens in one transaction; returns how many old items were replaced
    /// and the store's `version`.
    @discardableResult
    public func save(_ update: TokenUpdate, naming: TokenNaming, client: Client) throws -> (replaced: Int, version: Int) {
        try BearerToken.check(update.accessToken, "accessToken")
        if case .set(let token) = update.refresh { try BearerToken.check(token, "refreshToken") }
        // Tokens a refresh setting keeps carry its refreshBefore, so that fetches refresh them ahead of expiry.
        var refreshBefore: Int?
        if let refresher, let group = naming.accessGroup ?? client.accessGroups.first {
            refreshBefore = try refresher.refreshBefore(naming, group: group)
        }
        // The version counts stores: the one read is still stored when the replace commits, or
        // the replace is tried again (a bounded compare-and-swap against concurrent stores).
        for _ in 0..<Self.versionAttempts {
            let stored = try item(naming, .accessToken, client: client)
            let version = (stored.flatMap(metadata(of:))?.version ?? 0) + 1
            var deleting = [query(naming, .accessToken)]
            var adding = [
                newItem(
                    naming, .accessToken, update.accessToken,
                    metadata: TokenMetadata(
                        expiresAt: update.expiresAt, refreshBefore: update.expiresAt == nil ? nil : refreshBefore,
                        version: version)),
            ]
            switch update.refresh {
            case .keep:
                break
            case .set(let token):
                deleting.append(query(naming, .refreshToken))
                adding.append(newItem(naming, .refreshToken, token, metadata: nil))
            case .remove:
                deleting.append(query(naming, .refreshToken))
            }
            guard
                let replaced = try items.replace(
                    deleting: deleting, adding: adding, client: client,
                    provided: { try $0(query(naming, .accessToken))?.persistentRef == stored?.persistentRef })
            else { continue }
            if let refresher, refreshBefore != nil, let group = replaced.added.first?.item.accessGroup {
                try refresher.tokensSaved(naming, group: group)
            }
            return (replaced.deleted, version)
        }
        throw KeychainError.io("the tokens for \(Self.describe(naming)) changed under \(Self.versionAttempts) stores in a row")
    }

    /// How many times a store is tried while others replace the same tokens.
    private static let versionAttempts = 16

    /// The next `TokenMetadata.version` for `naming`'s tokens (a refresh's store).
    func nextVersion(_ naming: TokenNaming, client: Client) throws -> Int {
        (try item(naming, .accessToken, client: client).flatMap(metadata(of:))?.version ?? 0) + 1
    }


    /// Both tokens, refreshed first when due; errSecItemNotFound when no access token is stored.
    /// The refresh token of tokens a refresh setting keeps is answered to admin clients only
    /// (the item search leaves it out for a client: `KeptRefreshTokens`). `answeringStored`: an
    /// expired token whose refresh failed is answered as stored (else errSecItemNotFound, as
    /// `authorization` answers).
    public func tokens(
        _ naming: TokenNaming, client: Client, wait: ExchangeWait = .block, answeringStored: Bool = true
    ) throws -> Tokens {
        let access = try freshAccess(naming, client: client, wait: wait, answeringStored: answeringStored)
        if !answeringStored, access.expired, let expiresAt = access.expiresAt {
            throw KeychainError.itemNotFound(
                "the access token for \(Self.describe(naming)) expired at \(RFC3339.format(expiresAt))")
        }
        let refresh = try item(naming, .refreshToken, client: client)
        let metadata = metadata(of: access.item)
        return Tokens(
            accessToken: access.item.secret?.utf8String() ?? "",
            refreshToken: refresh.map { $0.secret?.utf8String() ?? "" },
            expiresAt: access.expiresAt,
            expired: access.expired,
            refreshBefore: metadata?.refreshBefore,
            version: metadata?.version,
            storedAt: access.item[.modificationDate].flatMap { if case .date(let date) = $0 { date } else { nil } })
    }

    /// What `/authorization` answers: the header, and how long a caller may keep it.
    public struct Authorization: Sendable {
        /// `Bearer <accessToken>`.
        public var header: String
        /// Whole seconds until the token is due (its expiry less the setting's `refreshBefore`,
        /// which is 0 without a setting), 0 once it is; nil when no expiry is stored, so nobody
        /// can tell how long it stays valid.
        public var freshForSeconds: Int?
    }

    /// `Bearer <accessToken>` and how long it stays fresh; errSecItemNotFound when none is
    /// stored, it has expired, or what is stored cannot be a bearer token: empty or not UTF-8
    /// text, or holding a control character (possible for an item written through the item
    /// routes; PUT refuses all three). A header
    /// `Bearer ` with nothing after it is never answered. Reads the access token alone: this is
    /// the route backend services call on every request.
    public func authorization(_ naming: TokenNaming, client: Client, wait: ExchangeWait = .block) throws -> Authorization {
        let fresh = try freshAccess(naming, client: client, wait: wait)
        if fresh.expired, let expiresAt = fresh.expiresAt {
            throw KeychainError.itemNotFound(
                "the access token for \(Self.describe(naming)) expired at \(RFC3339.format(expiresAt))")
        }
        guard let secret = fresh.item.secret, !secret.isEmpty else {
            throw KeychainError.itemNotFound("the access token stored for \(Self.describe(naming)) is empty")
        }
        guard let header = secret.utf8String(after: "Bearer ") else {
            throw KeychainError.itemNotFound("the access token stored for \(Self.describe(naming)) is not UTF-8 text")
        }
        guard !secret.withUnsafeBytes({ BearerToken.hasControlCharacter($0) }) else {
            throw KeychainError.itemNotFound(
                "the access token stored for \(Self.describe(naming)) holds a control character (CR, LF, ...)")
        }
        let freshFor = fresh.freshUntil.map { max(0, Int($0.timeIntervalSince(items.clock()).rounded(.down))) }
        return Authorization(header: header, freshForSeconds: freshFor)
    }

    /// Deletes both tokens in one transaction; returns how many; errSecItemNotFound when none. A
    /// refresh token a provider's setting kept is revoked at the provider afterwards
    /// (`TokenRefreshing.deleteRevoking`).
    @discardableResult
    public func delete(_ naming: TokenNaming, client: Client) throws -> Int {
        let delete = {
            try self.items.replace(
                deleting: [self.query(naming, .accessToken), self.query(naming, .refreshToken)], adding: [], client: client
            ).deleted
        }
        let deleted = try refresher?.deleteRevoking(naming, client: client, delete) ?? delete()
        guard deleted > 0 else { throw KeychainError.itemNotFound("no tokens stored for \(Self.describe(naming))") }
        return deleted
    }

    // MARK: - Pieces

    /// The access token item as a fetch answers it, with its expiry and the moment it is due
    /// for refresh (`expiresAt − refreshBefore`; the expiry itself without a setting).
    private struct Access {
        var item: Item
        var expiresAt: Date?
        var expired: Bool
        var freshUntil: Date?
    }

    /// The access token item, refreshed first when a refresher covers it and it is missing,
    /// expired or within `refreshBefore` of expiry. Not due: one compare of the expiry its
    /// metadata holds, as before refresh existed. `answeringStored`: a failed refresh answers
    /// what is stored (`GET /tokens/{service}` shows an expired token as such) instead of throwing.
    /// `wait`: whether this thread may wait for an exchange (`ExchangeInProgress` is thrown when not).
    private func freshAccess(
        _ naming: TokenNaming, client: Client, wait: ExchangeWait, answeringStored: Bool = false
    ) throws -> Access {
        let item: Item
        do {
            item = try find(naming, .accessToken, client: client)
        } catch let error as KeychainError where error.code == .itemNotFound {
            guard let refresher, try refresher.refresh(naming, storedGroup: nil, client: client, wait: wait) else { throw error }
            return access(try find(naming, .accessToken, client: client))
        }
        guard let metadata = metadata(of: item), let expiresAt = metadata.expiresAt else {
            return Access(item: item, expiresAt: nil, expired: false, freshUntil: nil)
        }
        let refreshBefore = Double(metadata.refreshBefore ?? 0)
        let left = expiresAt.timeIntervalSince(items.clock())
        let freshUntil = expiresAt.addingTimeInterval(-refreshBefore)
        if left > refreshBefore { return Access(item: item, expiresAt: expiresAt, expired: false, freshUntil: freshUntil) }
        let stored = Access(item: item, expiresAt: expiresAt, expired: left <= 0, freshUntil: freshUntil)
        guard let refresher else { return stored }
        do {
            guard try refresher.refresh(naming, storedGroup: item.accessGroup, client: client, wait: wait) else { return stored }
        } catch let error as KeychainError where error.code == .serviceNotAvailable && answeringStored {
            return stored
        }
        return access(try find(naming, .accessToken, client: client))
    }

    private func access(_ item: Item) -> Access {
        let metadata = metadata(of: item)
        let expiresAt = metadata?.expiresAt
        return Access(
            item: item, expiresAt: expiresAt, expired: expiresAt.map { $0 <= items.clock() } ?? false,
            freshUntil: expiresAt?.addingTimeInterval(-Double(metadata?.refreshBefore ?? 0)))
    }

    /// The item, nil when none is stored.
    func item(_ naming: TokenNaming, _ kind: TokenNaming.Kind, client: Client) throws -> Item? {
        do {
            return try find(naming, kind, client: client)
        } catch let error as KeychainError where error.code == .itemNotFound {
            return nil
        }
    }

    func query(_ naming: TokenNaming, _ kind: TokenNaming.Kind) -> ItemQuery {
        ItemQuery(
            itemClass: .genericPassword, attributes: naming.attributes(kind), limit: .one,
            returnKinds: [.attributes, .data])
    }

    func newItem(_ naming: TokenNaming, _ kind: TokenNaming.Kind, _ token: String, metadata: TokenMetadata?) -> NewItem {
        var attributes = naming.attributes(kind)
        if let metadata { attributes[.generic] = .data(metadataFormat.encode(metadata)) }
        return NewItem(
            itemClass: .genericPassword, attributes: attributes, secret: SecretBytes(utf8: token, lockedInMemory: false))
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
    func encode(_ metadata: TokenMetadata) -> [UInt8] { metadataFormat.encode(metadata) }

    func metadata(of item: Item) -> TokenMetadata? {
        guard case .data(let bytes)? = item.attributes[.generic] else { return nil }
        return metadataFormat.decode(bytes)
    }
}
