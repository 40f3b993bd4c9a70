public import Foundation

/// SecItemAdd / CopyMatching / Update / Delete (docs/keychain-semantics.md §5) over an `ItemStore`,
/// for one calling client. Isolation by access group is decided here: a client's filters never
/// reach outside its groups, so nothing it sees, counts, changes or is told reveals other items.
public final class KeychainService: Sendable {
    public let store: any ItemStore
    let certificateParser: any CertificateParser
    public let clock: @Sendable () -> Date
    /// The most items one CopyMatching answer carries before it is cut with a `next` cursor.
    public let pageSize: Int
    /// The most bytes (`ItemPage.bytes`) the items of one CopyMatching answer of several items
    /// hold before it is cut with a `next` cursor; nil: no bound. One item comes alone however large.
    public let maxPageBytes: Int?
    /// Seals the `next` cursors of answers and opens the `cursor` of queries.
    let cursors: PageCursorSeal
    /// Whether data may be a KV secret's version (a JSON object; the API layer parses JSON). Nil:
    /// a native update of a KV secret's data is refused.
    let kvDataCheck: (@Sendable (SecretBytes) throws -> Void)?

    public init(
        store: any ItemStore, certificateParser: any CertificateParser, cursors: PageCursorSeal,
        clock: @escaping @Sendable () -> Date = { Date() }, pageSize: Int = 1000, maxPageBytes: Int? = nil,
        kvDataCheck: (@Sendable (SecretBytes) throws -> Void)? = nil
    ) {
        precondition(pageSize > 0 && (maxPageBytes ?? 1) > 0)
        self.store = store
        self.certificateParser = certificateParser
        self.clock = clock
        self.pageSize = pageSize
        self.maxPageBytes = maxPageBytes
        self.cursors = cursors
        self.kvDataCheck = kvDataCheck
    }

    // MARK: - SecItemAdd

    /// Adds one item (or an identity's certificate and private key in one transaction) and
    /// returns it as stored, secret included.
    @discardableResult
    public func add(_ request: NewItem, client: Client) throws -> FoundItem {
        var common = try commonAttributes(request, client: client)
        switch request.itemClass {
        case .genericPassword, .internetPassword, .key:
            common[.accessible] = common[.accessible] ?? .string("whenUnlocked")
            let item = Item(
                itemClass: request.itemClass, persistentRef: .random(), attributes: common,
                secret: request.secret ?? SecretBytes([UInt8]()))
            try store.transaction { transaction in
                try KeptRefreshTokens.refuseWrite(of: item, by: client, in: transaction)
                try transaction.add([item])
            }
            return FoundItem(item: item)
        case .certificate:
            let certificate = try makeCertificate(common, der: request.secret)
            try store.add([certificate])
            return FoundItem(item: certificate)
        case .identity:
            var certificateAttributes = common.filter { $0.key.belongs(to: .certificate) }
            certificateAttributes[.accessible] = common[.accessible] ?? .string("always")
            let certificate = try makeCertificate(certificateAttributes, der: request.secret)
            var keyAttributes = common.filter { $0.key.belongs(to: .key) }
            keyAttributes[.accessible] = common[.accessible] ?? .string("whenUnlocked")
            if let keyClass = keyAttributes[.keyClass], keyClass != .string("private") {
                throw KeychainError.param("an identity's key is a private key: \"keyClass\" must be private")
            }
            guard case .data(let hash)? = certificate.attributes[.publicKeyHash] else {
                throw KeychainError.param("the certificate has no public key")
            }
            if let label = keyAttributes[.applicationLabel], label != .data(hash) {
                throw KeychainError.param("\"applicationLabel\" must equal the certificate's publicKeyHash")
            }
            keyAttributes[.keyClass] = .string("private")
            keyAttributes[.applicationLabel] = .data(hash)
            guard let privateKey = request.privateKey, !privateKey.isEmpty else {
                throw KeychainError.param("an identity needs \"privateKey\"")
            }
            let key = Item(itemClass: .key, persistentRef: .random(), attributes: keyAttributes, secret: privateKey)
            try store.add([certificate, key])
            return FoundItem(identityCertificate: certificate, key: key)
        }
    }

    /// The attributes every added item gets: its group (explicit or the client's first), the
    /// synchronizable flag, both dates; read-only attributes and those of another class refused.
    private func commonAttributes(_ request: NewItem, client: Client) throws -> [Attribute: AttributeValue] {
        let group = try addGroup(request.attributes, client: client)
        let now = clock().truncatedToMilliseconds
        for attribute in request.attributes.keys {
            if attribute.isReadOnly { throw KeychainError.param("\"\(attribute.name)\" is read-only") }
            if !attribute.belongs(to: request.itemClass) {
                throw KeychainError.noSuchAttr("\"\(attribute.name)\" is not an attribute of \(request.itemClass.rawValue)")
            }
        }
        // keychaind's own refresh records are sized by the setting's PUT, not by a client's values.
        if !group.hasSameUTF8(as: RefreshSettingStore.accessGroup) { try Self.checkValueSizes(request.attributes) }
        var common = request.attributes
        common[.accessGroup] = .string(group)
        common[.synchronizable] = common[.synchronizable] ?? .bool(false)
        common[.creationDate] = .date(now)
        common[.modificationDate] = .date(now)
        try checkAccessibility(common)
        if common[.generic] == KVService.marker { throw Self.kvMarkerRefusal }
        return common
    }

    // MARK: - Delete and add together

    /// SecItemDelete of every query, then SecItemAdd of every request, in one store transaction:
    /// all of it or nothing (a primary-key clash is errSecDuplicateItem and nothing changed).
    /// Password and key classes only. Returns how many items were deleted (no match is not an
    /// error here) and the added items as stored. This is the token routes' write: it replaces or
    /// removes a refresh token keychaind keeps for a client too, which no other operation shows
    /// or lets it change (`KeptRefreshTokens`).
    public func replace(
        deleting queries: [ItemQuery], adding requests: [NewItem], client: Client, recording events: [WebhookEvent] = []
    ) throws -> (deleted: Int, added: [FoundItem]) {
        guard
            let replaced = try replace(
                deleting: queries, adding: requests, client: client, recording: events, provided: { _ in true })
        else { preconditionFailure("a replace that holds no condition always happens") }
        return replaced
    }

    /// `replace`, made only if `condition` holds of what is stored, read in the same transaction:
    /// a compare-and-swap for a writer that decided what to write from an earlier read (an
    /// exchange of tokens that took seconds) and must not overwrite what was stored meanwhile.
    /// `condition` is given a lookup of the first item a query finds within the client's groups
    /// (nil: none), read with what the query's return kinds name. Nil when it did not hold:
    /// then nothing changed. `events` are recorded for webhooks in the same transaction.
    public func replace(
        deleting queries: [ItemQuery], adding requests: [NewItem], client: Client, recording events: [WebhookEvent] = [],
        provided condition: (_ stored: (ItemQuery) throws -> Item?) throws -> Bool
    ) throws -> (deleted: Int, added: [FoundItem])? {
        var filters: [ItemFilter] = []
        for query in queries {
            guard query.itemClass.isPasswordOrKey else {
                throw KeychainError.param("only passwords and keys are replaced together")
            }
            guard query.namesAnyAttribute else { throw KeychainError.param("a delete naming no attribute must say all=true") }
            filters.append(filter(query, groups: try visibleGroups(query, client: client)))
        }
        var items: [Item] = []
        for request in requests {
            guard request.itemClass.isPasswordOrKey else {
                throw KeychainError.param("only passwords and keys are replaced together")
            }
            var attributes = try commonAttributes(request, client: client)
            attributes[.accessible] = attributes[.accessible] ?? .string("whenUnlocked")
            items.append(
                Item(
                    itemClass: request.itemClass, persistentRef: .random(), attributes: attributes,
                    secret: request.secret ?? SecretBytes([UInt8]())))
        }
        let deleted: Int? = try store.transaction { transaction in
            let stored = { (query: ItemQuery) throws -> Item? in
                var contents: ItemContents = []
                if query.returnKinds.contains(.attributes) { contents.insert(.attributes) }
                if query.returnKinds.contains(.data) { contents.insert(.secret) }
                let groups = try self.visibleGroups(query, client: client)
                guard
                    let item = try transaction.find(
                        self.filter(query, groups: groups), limit: 1, after: nil, reading: contents.union(.attributes)
                    ).items.first
                else { return nil }
                return try KeptRefreshTokens.hides(item, from: client, in: transaction) ? nil : item
            }
            guard try condition(stored) else { return nil }
            var deleted = 0
            for filter in filters { deleted += try transaction.delete(filter) }
            try transaction.add(items)
            for event in events { try transaction.recordWebhookEvent(event) }
            return deleted
        }
        return deleted.map { ($0, items.map(FoundItem.init(item:))) }
    }

    private func makeCertificate(_ attributes: [Attribute: AttributeValue], der: SecretBytes?) throws -> Item {
        guard let der, !der.isEmpty else { throw KeychainError.param("a certificate needs its DER bytes in \"data\"") }
        let fields = try certificateParser.parse(der.copyBytes())
        var attributes = attributes.merging(fields.attributes) { _, derived in derived }
        attributes[.accessible] = attributes[.accessible] ?? .string("always")
        return Item(itemClass: .certificate, persistentRef: .random(), attributes: attributes, secret: der)
    }

    /// The group an add goes to: the explicit one if the client has it, else the client's first.
    private func addGroup(_ attributes: [Attribute: AttributeValue], client: Client) throws -> String {
        guard let first = client.accessGroups.first else { throw Self.noGroups(client) }
        guard let explicit = attributes[.accessGroup] else { return first }
        guard case .string(let group) = explicit, client.accessGroups.containsExactly(group) else {
            throw KeychainError.missingEntitlement("this client may not use access group \(Self.quoted(explicit))")
        }
        return group
    }

    /// errSecParam for a value larger than `AttributeValue.maximumBytes`, naming the attribute
    /// (never its value).
    static func checkValueSizes(_ attributes: [Attribute: AttributeValue]) throws {
        for (attribute, value) in attributes where value.storedBytes > AttributeValue.maximumBytes {
            throw KeychainError.param(
                "\"\(attribute.name)\" holds \(value.storedBytes) bytes; an attribute value holds at most "
                    + "\(AttributeValue.maximumBytes) (UTF-8 bytes of a string, bytes of data)")
        }
    }

    /// `…ThisDeviceOnly` items never leave the device, so they cannot be synchronizable.
    func checkAccessibility(_ attributes: [Attribute: AttributeValue]) throws {
        if attributes[.synchronizable] == .bool(true), case .string(let accessible)? = attributes[.accessible],
            accessible.hasSuffix("ThisDeviceOnly")
        {
            throw KeychainError.param("\"accessible\" \(accessible) cannot be synchronizable")
        }
    }

    // MARK: - SecItemCopyMatching

    /// The items matching `query`, in creation order, shaped by its limit (one page at most: up
    /// to `pageSize` items and `maxPageBytes` bytes). No match: errSecItemNotFound. A cursor that
    /// `cursors` did not seal for this query and client is errSecParam.
    public func copyMatching(_ query: ItemQuery, client: Client) throws -> MatchResult {
        let groups = try visibleGroups(query, client: client)
        let position = try query.cursor.map { try cursors.open($0, query: query, client: client) }
        let take: Int
        var remainingAfter: Int?
        switch query.limit {
        case .one, .count(1):
            take = 1
        case .count(let limit):
            let remaining = position?.remaining ?? limit
            take = min(remaining, pageSize)
            remainingAfter = remaining - take
        case .all:
            take = pageSize
        }
        // Only what the return kinds need is read; identities join on attributes, and a kept
        // refresh token is told from its attributes.
        var contents: ItemContents = []
        if query.returnKinds.contains(.attributes) || query.itemClass == .identity
            || KeptRefreshTokens.mayHide(query.itemClass, from: client)
        {
            contents.insert(.attributes)
        }
        if query.returnKinds.contains(.data) { contents.insert(.secret) }
        let maxBytes = take > 1 ? maxPageBytes : nil
        let items: [FoundItem]
        var next: PagePosition?
        if query.itemClass == .identity {
            let page = try findIdentities(
                query, groups: groups, take: take, after: position?.after, maxBytes: maxBytes, reading: contents,
                in: store)
            items = page.items
            next = page.next.map { PagePosition(after: $0, remaining: nil) }
        } else {
            let page = try visiblePage(
                filter(query, groups: groups), limit: take, after: position?.after, reading: contents,
                maxBytes: maxBytes, client: client)
            items = page.items.map(FoundItem.init(item:))
            next = page.next.map { PagePosition(after: $0, remaining: nil) }
        }
        // Cut or continue the page according to the limit (a page cut by bytes holds fewer than `take`).
        switch query.limit {
        case .one, .count(1):
            next = nil
        case .count:
            if let remaining = remainingAfter.map({ $0 + take - items.count }), remaining > 0 {
                next?.remaining = remaining
            } else {
                next = nil
            }
        case .all:
            break
        }
        guard !items.isEmpty else { throw KeychainError.itemNotFound(query.summary) }
        return MatchResult(items: items, next: try next.map { try cursors.seal($0, query: query, client: client) })
    }

    /// A page of `filter`'s matches as `client` may see them: kept refresh tokens it may not
    /// see are passed over and the page filled from the matches after them, so that limits and
    /// cursors count only what it sees.
    private func visiblePage(
        _ filter: ItemFilter, limit: Int, after cursor: ItemCursor?, reading contents: ItemContents, maxBytes: Int?,
        client: Client
    ) throws -> ItemPage {
        var page = try store.find(filter, limit: limit, after: cursor, reading: contents, maxBytes: maxBytes)
        guard KeptRefreshTokens.mayHide(filter.itemClass, from: client) else { return page }
        var visible: [Item] = []
        var bytesLeft = maxBytes
        var asked = limit
        while true {
            for item in page.items {
                guard try !KeptRefreshTokens.hides(item, from: client, in: store) else { continue }
                visible.append(item)
                bytesLeft = bytesLeft.map { $0 - ItemPage.bytes(of: item) }
            }
            // A page cut by bytes (fewer items than asked for) ends where it was cut.
            let wanted = limit - visible.count
            guard wanted > 0, page.items.count == asked, let next = page.next, bytesLeft.map({ $0 > 0 }) ?? true
            else { break }
            asked = wanted
            page = try store.find(filter, limit: wanted, after: next, reading: contents, maxBytes: bytesLeft)
        }
        return ItemPage(items: visible, next: page.next)
    }

    // MARK: - Filters and groups

    /// The groups a query may see: all of the client's, or the one it names (which it must have).
    func visibleGroups(_ query: ItemQuery, client: Client) throws -> [String] {
        guard !client.accessGroups.isEmpty else { throw Self.noGroups(client) }
        guard let named = query.attributes[.accessGroup] else { return client.accessGroups }
        guard case .string(let group) = named, client.accessGroups.containsExactly(group) else {
            throw KeychainError.missingEntitlement("this client may not use access group \(Self.quoted(named))")
        }
        return [group]
    }

    func filter(
        _ query: ItemQuery, groups: [String], itemClass: ItemClass? = nil,
        attributes: [Attribute: AttributeValue]? = nil
    ) -> ItemFilter {
        var equal = attributes ?? query.attributes
        switch query.synchronizable {
        case .nonSynchronizable: equal[.synchronizable] = .bool(false)
        case .synchronizable: equal[.synchronizable] = .bool(true)
        case .any: equal[.synchronizable] = nil
        }
        return ItemFilter(
            itemClass: itemClass ?? query.itemClass, accessGroups: groups, equal: equal,
            caseInsensitive: query.caseInsensitive, persistentRef: query.persistentRef)
    }

    static func noGroups(_ client: Client) -> KeychainError {
        KeychainError.missingEntitlement("client \"\(client.name)\" has no access groups")
    }

    static func quoted(_ value: AttributeValue) -> String {
        if case .string(let text) = value { return "\"\(text)\"" }
        return "(not a string)"
    }
}

extension ItemClass {
    fileprivate var isPasswordOrKey: Bool { self == .genericPassword || self == .internetPassword || self == .key }
}
