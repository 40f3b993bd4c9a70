public import Foundation

/// Where refresh settings and their state are kept: one generic-password item per setting in the
/// access group `keychaind.refresh`, which no client may be given (docs/decisions.md, "Refresh
/// settings as items in a group of keychaind's own"). The item's secret is the client secret,
/// sealed with its AAD like any secret; its `generic` holds the rest and the state
/// (`RefreshRecordFormat`); service = the token service, account = the group and user.
///
/// Living beside the tokens in the same store, a refresh's new tokens and its new state are
/// written in one transaction.
///
/// A setting that names a provider keeps only the name (its item has no secret): it is read
/// with the provider's endpoint and client as `providers` holds them then, so that a provider's
/// new client secret reaches every setting that names it at its next exchange.
public final class RefreshSettingStore: Sendable {
    /// The access group the settings live in; refused as a client's group.
    public static let accessGroup = "keychaind.refresh"

    public let tokens: TokenService
    public let providers: any ProviderStore
    private let format: any RefreshRecordFormat

    public init(tokens: TokenService, providers: any ProviderStore, format: any RefreshRecordFormat) {
        self.tokens = tokens
        self.providers = providers
        self.format = format
    }

    /// The setting kept for `key`, nil when there is none.
    public func record(_ key: RefreshKey) throws -> RefreshRecord? {
        let query = ItemQuery(
            itemClass: .genericPassword, attributes: Self.attributes(key), limit: .one,
            returnKinds: [.attributes, .data])
        return try find(query, client: Self.keeper(key.group))?.items.first.flatMap { try decode($0.item) }
    }

    /// What an exchange for `key` starts from: the setting as stored now and the refresh token
    /// stored beside it; nil when there is no setting.
    public func start(_ key: RefreshKey) throws -> ExchangeStart? {
        let query = ItemQuery(
            itemClass: .genericPassword, attributes: Self.attributes(key), limit: .one,
            returnKinds: [.attributes, .data])
        guard let item = try find(query, client: Self.keeper(key.group))?.items.first?.item, let record = try decode(item)
        else { return nil }
        return ExchangeStart(record: record, settingItem: item.persistentRef, refreshToken: try refreshToken(key))
    }

    /// Every stored setting (for the background refresher and metrics). A setting whose provider
    /// cannot be read is left out: it cannot be exchanged either.
    public func records() throws -> [RefreshRecord] {
        try settingItems(returning: [.attributes, .data]).compactMap { try? decode($0) }
    }

    /// How many stored settings name the provider `name` (whose removal they hold off).
    public func count(namingProvider name: String) throws -> Int {
        try settingItems(returning: [.attributes]).count { item in
            guard case .data(let bytes)? = item.attributes[.generic], let named = format.providerName(bytes) else { return false }
            return named.utf8.elementsEqual(name.utf8)
        }
    }

    /// Every setting's item, page by page.
    private func settingItems(returning kinds: ReturnKinds) throws -> [Item] {
        let query = ItemQuery(
            itemClass: .genericPassword, attributes: [.accessGroup: .string(Self.accessGroup)], limit: .all,
            returnKinds: kinds)
        var found: [Item] = []
        var cursor: PageCursor?
        repeat {
            var page = query
            page.cursor = cursor
            guard let result = try find(page, client: Self.keeper(nil)) else { break }
            found += result.items.map(\.item)
            cursor = result.next
        } while cursor != nil
        return found
    }

    /// Stores (or replaces) a setting with a state, and records `events` for webhooks with it.
    public func save(_ record: RefreshRecord, recording events: [WebhookEvent] = []) throws {
        _ = try tokens.items.replace(
            deleting: [Self.query(record.key)], adding: [item(record)], client: Self.keeper(record.key.group),
            recording: events)
    }

    /// Removes the setting; the tokens stay. Returns how many were removed.
    public func delete(_ key: RefreshKey) throws -> Int {
        try tokens.items.replace(deleting: [Self.query(key)], adding: [], client: Self.keeper(key.group)).deleted
    }

    /// The refresh token stored for `key`'s tokens, nil when there is none.
    public func refreshToken(_ key: RefreshKey) throws -> SecretBytes? {
        try tokens.item(key.naming, .refreshToken, client: Self.keeper(key.group))?.secret
    }

    /// The access token stored for `key`'s tokens: whether there is one and when it expires.
    public func access(_ key: RefreshKey) throws -> (stored: Bool, expiresAt: Date?) {
        guard let item = try tokens.item(key.naming, .accessToken, client: Self.keeper(key.group)) else {
            return (false, nil)
        }
        return (true, tokens.metadata(of: item)?.expiresAt)
    }

    /// Writes `refreshBefore` into the stored access token's metadata (nil: takes it out), so
    /// that fetches know how far ahead of expiry to refresh; nothing when no access token with
    /// an expiry is stored.
    public func markAccess(_ key: RefreshKey, refreshBefore: Int?) throws {
        let keeper = Self.keeper(key.group)
        guard let item = try tokens.item(key.naming, .accessToken, client: keeper),
            var metadata = tokens.metadata(of: item), metadata.expiresAt != nil, metadata.refreshBefore != refreshBefore
        else { return }
        metadata.refreshBefore = refreshBefore
        _ = try tokens.items.update(
            tokens.query(key.naming, .accessToken), with: ItemUpdate(attributes: [.generic: .data(tokens.encode(metadata))]),
            client: keeper)
    }

    /// Stores an exchange's tokens and the record's new state in one transaction: the new access
    /// token with its expiry, the rotated refresh token when there is one (the old one stays
    /// otherwise), and the record; only if the exchange's `start` is still what is stored
    /// (`isCurrent`). False when it is not: nothing was stored. `events` are recorded for webhooks
    /// in the same transaction.
    public func store(
        _ grant: TokenGrant, expiresAt: Date?, record: RefreshRecord, startedFrom start: ExchangeStart,
        recording events: [WebhookEvent] = []
    ) throws -> Bool {
        let naming = record.key.naming
        let keeper = Self.keeper(record.key.group)
        let metadata = TokenMetadata(
            expiresAt: expiresAt, refreshBefore: record.setting.refreshBefore,
            version: try tokens.nextVersion(naming, client: keeper))
        var deleting = [tokens.query(naming, .accessToken), Self.query(record.key)]
        var adding = [tokens.newItem(naming, .accessToken, grant.accessToken, metadata: metadata), item(record)]
        if let refreshToken = grant.refreshToken {
            deleting.append(tokens.query(naming, .refreshToken))
            adding.append(tokens.newItem(naming, .refreshToken, refreshToken, metadata: nil))
        }
        return try tokens.items.replace(
            deleting: deleting, adding: adding, client: keeper, recording: events,
            provided: { stored in try isCurrent(start, stored) }) != nil
    }

    /// Stores the record's new state (an exchange's failure, a new `nextRefreshAt`) only if the
    /// exchange's `start` is still what is stored; false when it is not: nothing was stored (a
    /// setting removed meanwhile is not brought back). `events` are recorded for webhooks with it.
    public func save(_ record: RefreshRecord, startedFrom start: ExchangeStart, recording events: [WebhookEvent] = [])
        throws -> Bool
    {
        try tokens.items.replace(
            deleting: [Self.query(record.key)], adding: [item(record)], client: Self.keeper(record.key.group),
            recording: events, provided: { stored in try isCurrent(start, stored) }) != nil
    }

    /// Whether what an exchange started from is still stored: the same setting item (every save
    /// of a setting or its state writes a new one, with a new persistent reference) and the same
    /// refresh token (or still none). A new access token stored alone, the refresh token kept,
    /// does not by itself discard the exchange: its rotated refresh token may be the only one the
    /// provider still accepts.
    private func isCurrent(_ start: ExchangeStart, _ stored: (ItemQuery) throws -> Item?) throws -> Bool {
        let key = start.record.key
        guard try stored(Self.query(key))?.persistentRef == start.settingItem else { return false }
        return try stored(tokens.query(key.naming, .refreshToken))?.secret == start.refreshToken
    }

    // MARK: - Pieces

    /// The client keychaind acts as for a refresh: the token group and the settings' group.
    static func keeper(_ group: String?) -> Client {
        Client(
            name: "keychaind-refresh", accessGroups: [group, accessGroup].compactMap { $0 }, role: .admin,
            createdAt: Date(timeIntervalSince1970: 0))
    }

    static func attributes(_ key: RefreshKey) -> [Attribute: AttributeValue] {
        var account = "\(key.group.utf8.count):\(key.group)"
        if let user = key.user { account += "/\(user)" }
        return [.service: .string(key.service), .account: .string(account), .accessGroup: .string(accessGroup)]
    }

    static func query(_ key: RefreshKey) -> ItemQuery {
        ItemQuery(itemClass: .genericPassword, attributes: attributes(key), limit: .one, returnKinds: [.attributes])
    }

    /// The key an item's service and account name: account = `<byte count of group>:<group>[/<user>]`.
    static func key(of item: Item) -> RefreshKey? {
        guard case .string(let service)? = item.attributes[.service], case .string(let account)? = item.attributes[.account],
            let colon = account.utf8.firstIndex(of: UInt8(ascii: ":")),
            let count = Int(String(account.utf8[..<colon]) ?? "")
        else { return nil }
        let rest = account.utf8[account.utf8.index(after: colon)...]
        guard rest.count >= count else { return nil }
        let groupEnd = rest.index(rest.startIndex, offsetBy: count)
        guard let group = String(rest[..<groupEnd]) else { return nil }
        let tail = rest[groupEnd...]
        if tail.isEmpty { return RefreshKey(service: service, user: nil, group: group) }
        guard tail.first == UInt8(ascii: "/"), let user = String(tail.dropFirst()) else { return nil }
        return RefreshKey(service: service, user: user, group: group)
    }

    private func find(_ query: ItemQuery, client: Client) throws -> MatchResult? {
        do {
            return try tokens.items.copyMatching(query, client: client)
        } catch let error as KeychainError where error.code == .itemNotFound {
            return nil
        }
    }

    /// Whether a stored setting's item names the provider `name` (a connect may replace it).
    func names(_ item: Item, provider name: String) -> Bool {
        guard case .data(let bytes)? = item.attributes[.generic], let named = format.providerName(bytes) else { return false }
        return named.utf8.elementsEqual(name.utf8)
    }

    func item(_ record: RefreshRecord) -> NewItem {
        var attributes = Self.attributes(record.key)
        attributes[.generic] = .data(format.encode(record.setting, record.state))
        // A setting that names a provider keeps no copy of the provider's secret.
        let secret = record.setting.provider == nil ? record.setting.clientSecret : nil
        return NewItem(itemClass: .genericPassword, attributes: attributes, secret: secret)
    }

    /// The record an item keeps; nil when it is not one. Throws when it names a provider that
    /// cannot be read (errSecItemNotFound when there is none of that name).
    private func decode(_ item: Item) throws -> RefreshRecord? {
        guard let key = Self.key(of: item), case .data(let bytes)? = item.attributes[.generic],
            let (setting, state) = try format.decode(bytes, clientSecret: item.secret, provider: provider(named:))
        else { return nil }
        return RefreshRecord(key: key, setting: setting, state: state)
    }

    /// The provider a setting names, as stored now.
    private func provider(named name: String) throws -> OAuthProvider {
        guard let provider = try providers.provider(named: name) else {
            throw KeychainError.itemNotFound("the refresh setting names provider \"\(name)\", which is not set up")
        }
        return provider
    }
}

/// What an exchange started from, to store its outcome only if nothing replaced it meanwhile
/// (an admin's new setting, its removal, or new tokens): the record as read, the stored item it
/// was read from, and the refresh token stored then (the one presented to the provider).
public struct ExchangeStart: Sendable {
    public let record: RefreshRecord
    let settingItem: PersistentRef
    public let refreshToken: SecretBytes?
}
