import Foundation

/// SecItemUpdate and SecItemDelete: every match changed in one transaction, and a kept refresh
/// token a client may not see neither changed nor counted (`KeptRefreshTokens`).
extension KeychainService {
    // MARK: - SecItemUpdate

    /// Applies `update` to every match in one transaction; returns how many. No match:
    /// errSecItemNotFound; a primary-key clash: errSecDuplicateItem and nothing changed.
    @discardableResult
    public func update(_ query: ItemQuery, with update: ItemUpdate, client: Client) throws -> Int {
        let groups = try visibleGroups(query, client: client)
        guard !update.attributes.isEmpty || update.secret != nil else {
            throw KeychainError.param("the update changes nothing")
        }
        for attribute in update.attributes.keys {
            if attribute.isReadOnly { throw KeychainError.param("\"\(attribute.name)\" is read-only") }
            if !attribute.belongs(to: query.itemClass) {
                throw KeychainError.noSuchAttr("\"\(attribute.name)\" is not an attribute of \(query.itemClass.rawValue)")
            }
        }
        try Self.checkValueSizes(update.attributes)
        if let target = update.attributes[.accessGroup] {
            guard case .string(let group) = target, client.accessGroups.containsExactly(group) else {
                throw KeychainError.missingEntitlement("this client may not use access group \(Self.quoted(target))")
            }
        }
        if update.secret != nil, query.itemClass == .certificate || query.itemClass == .identity {
            throw KeychainError.param("a certificate's bytes cannot be changed; delete and add it")
        }
        try checkAccessibility(update.attributes)
        if update.attributes[.generic] == KVService.marker { throw Self.kvMarkerRefusal }
        let now = clock().truncatedToMilliseconds
        if query.itemClass == .identity {
            return try updateIdentities(query, update, groups: groups, now: now)
        }
        let changes = ItemChanges(
            attributes: update.attributes.mapValues { Optional($0) }, secret: update.secret, modificationDate: now)
        let count = try writeVisible(
            filter(query, groups: groups), client: client,
            checking: { item, transaction in
                var updated = item
                updated.attributes.merge(update.attributes) { $1 }
                try KeptRefreshTokens.refuseWrite(of: updated, by: client, in: transaction)
                if KVService.isKVItem(item) { try self.writeThrough(update, to: item, now: now, in: transaction) }
            },
            { filter, transaction in try transaction.update(filter, with: changes) })
        guard count > 0 else { throw KeychainError.itemNotFound(query.summary) }
        return count
    }

    // MARK: - SecItemDelete

    /// Deletes every match; returns how many. A query naming no attribute needs `deleteAll`.
    @discardableResult
    public func delete(_ query: ItemQuery, client: Client) throws -> Int {
        let groups = try visibleGroups(query, client: client)
        guard query.namesAnyAttribute || query.deleteAll else {
            throw KeychainError.param("a delete naming no attribute must say all=true")
        }
        if query.itemClass == .identity {
            let identities = try store.transaction { transaction in
                let identities = try allIdentities(query, groups: groups, in: transaction)
                for identity in identities {
                    _ = try transaction.delete(
                        ItemFilter(itemClass: .key, accessGroups: groups, persistentRef: identity.key?.persistentRef))
                    _ = try transaction.delete(
                        ItemFilter(itemClass: .certificate, accessGroups: groups, persistentRef: identity.persistentRef))
                }
                return identities
            }
            guard !identities.isEmpty else { throw KeychainError.itemNotFound(query.summary) }
            return identities.count
        }
        let count = try writeVisible(
            filter(query, groups: groups), client: client,
            checking: { item, transaction in
                if KVService.isKVItem(item) { try KVService.removeThrough(item, in: transaction) }
            },
            { filter, transaction in try transaction.delete(filter) })
        guard count > 0 else { throw KeychainError.itemNotFound(query.summary) }
        return count
    }

    /// Runs `write` (an update or delete counting what it changed) on the matches of `filter`
    /// that `client` may change, in one transaction: on `filter` itself when it hides nothing
    /// from the client, else on each match the client sees, by its reference. A kept refresh
    /// token the client may not see is thus neither changed nor counted (`KeptRefreshTokens`).
    /// `check` is shown each match the client sees before anything is written (generic passwords
    /// are read for it: any may be a KV secret's item).
    private func writeVisible(
        _ filter: ItemFilter, client: Client,
        checking check: (Item, any ItemOperations) throws -> Void = { _, _ in },
        _ write: (ItemFilter, any ItemOperations) throws -> Int
    ) throws -> Int {
        try store.transaction { transaction in
            guard KeptRefreshTokens.mayHide(filter.itemClass, from: client) || filter.itemClass == .genericPassword else {
                return try write(filter, transaction)
            }
            var visible: [Item] = []
            var hidesAny = false
            for item in try transaction.find(filter, limit: nil, after: nil, reading: .attributes).items {
                if try KeptRefreshTokens.hides(item, from: client, in: transaction) {
                    hidesAny = true
                    continue
                }
                try check(item, transaction)
                visible.append(item)
            }
            guard hidesAny else { return try write(filter, transaction) }
            var count = 0
            for item in visible {
                var one = filter
                one.persistentRef = item.persistentRef
                count += try write(one, transaction)
            }
            return count
        }
    }

    // MARK: - KV secrets' items

    /// A native update of a KV secret's item: its data becomes a new version; its primary key and
    /// marker stay (the path is the KV surface's to change).
    private func writeThrough(_ update: ItemUpdate, to item: Item, now: Date, in transaction: any ItemOperations) throws {
        for attribute in [Attribute.service, .account, .accessGroup, .generic] where update.attributes[attribute] != nil {
            throw KeychainError.param(
                "\"\(attribute.name)\" of a KV secret's item is the KV surface's: move the secret through /v1/<group>/data/")
        }
        if let data = update.secret {
            try KVService.writeThrough(item, data: data, checkData: kvDataCheck, now: now, in: transaction)
        }
    }

    static let kvMarkerRefusal = KeychainError.param(
        "\"generic\" holds the value that marks a KV secret's item: write KV secrets through /v1/<group>/data/")
}
