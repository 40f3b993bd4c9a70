public import Foundation
public import KeychainCore
import KeychainStore
import Synchronization

/// An `ItemStore` in memory, for tests of the service layer and as the reference the conformance
/// suite holds every other store to. One lock guards everything; a transaction holds it
/// throughout and works on a copy of the rows, which replaces them when it commits.
public final class InMemoryItemStore: ItemStore {
    private let state = Mutex(Rows())

    public init() {}

    public func find(
        _ filter: ItemFilter, limit: Int?, after cursor: ItemCursor?, reading contents: ItemContents, maxBytes: Int?
    ) throws -> ItemPage {
        state.withLock { $0.find(filter, limit: limit, after: cursor, reading: contents, maxBytes: maxBytes) }
    }

    public func transaction<Result>(_ body: (any ItemOperations) throws -> Result) throws -> Result {
        try state.withLock { rows in
            let transaction = Transaction(rows)
            let result = try body(transaction)
            if let failure = transaction.failure { throw failure }
            rows = transaction.rows
            return result
        }
    }

    public func countByClass() throws -> [ItemClass: Int] {
        state.withLock { state in
            var counts: [ItemClass: Int] = [:]
            for itemClass in ItemClass.storedClasses { counts[itemClass] = 0 }
            for row in state.rows { counts[row.item.itemClass, default: 0] += 1 }
            return counts
        }
    }

    public func kvMetadata(of key: KVSecretKey) throws -> KVMetadata? { state.withLock { $0.kv.metadata(of: key) } }

    public func kvVersions(of key: KVSecretKey) throws -> [KVVersion] { state.withLock { $0.kv.versions(of: key) } }

    public func kvVersion(_ number: Int, of key: KVSecretKey) throws -> KVVersion? {
        state.withLock { $0.kv.version(number, of: key) }
    }

    public func kvPaths(in group: String, prefix: String) throws -> [String] {
        state.withLock { $0.kv.paths(in: group, prefix: prefix) }
    }

    /// The operations of one transaction, on its own copy of the rows.
    private final class Transaction: ItemOperations {
        var rows: Rows
        /// The first error an operation threw: the transaction then commits nothing.
        private(set) var failure: (any Error)?

        init(_ rows: Rows) { self.rows = rows }

        func add(_ items: [Item]) throws { try run { try rows.add(items) } }

        func find(
            _ filter: ItemFilter, limit: Int?, after cursor: ItemCursor?, reading contents: ItemContents, maxBytes: Int?
        ) throws -> ItemPage {
            try run { rows.find(filter, limit: limit, after: cursor, reading: contents, maxBytes: maxBytes) }
        }

        func update(_ filter: ItemFilter, with changes: ItemChanges) throws -> Int {
            try run { try rows.update(filter, with: changes) }
        }

        func delete(_ filter: ItemFilter) throws -> Int { try run { rows.delete(filter) } }

        func kvMetadata(of key: KVSecretKey) throws -> KVMetadata? { try run { rows.kv.metadata(of: key) } }

        func kvVersions(of key: KVSecretKey) throws -> [KVVersion] { try run { rows.kv.versions(of: key) } }

        func kvVersion(_ number: Int, of key: KVSecretKey) throws -> KVVersion? { try run { rows.kv.version(number, of: key) } }

        func kvPutMetadata(_ metadata: KVMetadata, of key: KVSecretKey) throws { try run { rows.kv.put(metadata, of: key) } }

        func kvPutVersion(_ version: KVVersion, of key: KVSecretKey) throws { try run { try rows.kv.put(version, of: key) } }

        func kvRemoveVersions(below number: Int, of key: KVSecretKey) throws -> Int {
            try run { rows.kv.removeVersions(below: number, of: key) }
        }

        func kvRemove(_ key: KVSecretKey) throws -> Bool { try run { rows.kv.remove(key) } }

        func kvPaths(in group: String, prefix: String) throws -> [String] { try run { rows.kv.paths(in: group, prefix: prefix) } }

        func recordWebhookEvent(_ event: WebhookEvent) throws { try run { rows.webhooks.enqueue(event) } }

        private func run<T>(_ operation: () throws -> T) throws -> T {
            if let failure { throw failure }
            do {
                return try operation()
            } catch {
                failure = error
                throw error
            }
        }
    }
}

/// The stored items in creation order. Each change checks first and changes after, so one that
/// throws leaves the rows as they were.
private struct Rows {
    struct Row {
        var sequence: Int64
        var item: Item
    }

    var rows: [Row] = []
    var nextSequence: Int64 = 1
    var kv = KVSecrets()
    var webhooks = Webhooks()

    mutating func add(_ items: [Item]) throws {
        var keys = Set(rows.map { PrimaryKey($0.item) })
        for item in items {
            guard keys.insert(PrimaryKey(item)).inserted else { throw KeychainError.duplicateItem() }
        }
        for item in items {
            rows.append(Row(sequence: nextSequence, item: item))
            nextSequence += 1
        }
    }

    func find(
        _ filter: ItemFilter, limit: Int?, after cursor: ItemCursor?, reading contents: ItemContents, maxBytes: Int?
    ) -> ItemPage {
        let start = cursor?.afterSequence ?? 0
        let matches = rows.filter { $0.sequence > start && filter.matches($0.item) }
        let read = matches.map { row -> Item in
            var item = row.item
            if !contents.contains(.attributes) { item.attributes = [:] }
            if !contents.contains(.secret) { item.secret = nil }
            return item
        }
        let count = ItemPage.count(of: read.lazy.map(ItemPage.bytes(of:)), limit: limit, maxBytes: maxBytes)
        let next = count < matches.count && count > 0 ? ItemCursor(afterSequence: matches[count - 1].sequence) : nil
        return ItemPage(items: Array(read.prefix(count)), next: next)
    }

    mutating func update(_ filter: ItemFilter, with changes: ItemChanges) throws -> Int {
        var changed = rows
        var count = 0
        for index in changed.indices where filter.matches(changed[index].item) {
            var item = changed[index].item
            for (attribute, value) in changes.attributes { item.attributes[attribute] = value }
            if let secret = changes.secret { item.secret = secret }
            item.attributes[.modificationDate] = .date(
                Self.later(changes.modificationDate, than: item.attributes[.modificationDate]))
            changed[index].item = item
            count += 1
        }
        var keys = Set<PrimaryKey>()
        for row in changed where !keys.insert(PrimaryKey(row.item)).inserted {
            throw KeychainError.duplicateItem()
        }
        rows = changed
        return count
    }

    mutating func delete(_ filter: ItemFilter) -> Int {
        let before = rows.count
        rows.removeAll { filter.matches($0.item) }
        return before - rows.count
    }

    /// `date`, or one millisecond after `previous` when `date` is not later than it.
    private static func later(_ date: Date, than previous: AttributeValue?) -> Date {
        guard case .date(let old) = previous, date <= old else { return date }
        return Date(millisecondsSince1970: old.millisecondsSince1970 + 1)
    }

    private struct PrimaryKey: Hashable {
        let itemClass: ItemClass
        let values: [AttributeValue]
        init(_ item: Item) {
            itemClass = item.itemClass
            values = item.primaryKey
        }
    }
}

/// The KV secrets, each with its metadata and kept versions, by group and path compared by their
/// bytes (as the databases compare them, not by Unicode equivalence as `String` does).
private struct KVSecrets {
    struct Key: Hashable {
        let group: [UInt8]
        let path: [UInt8]
        init(_ key: KVSecretKey) {
            group = Array(key.group.utf8)
            path = Array(key.path.utf8)
        }
    }

    struct Secret {
        var metadata: KVMetadata
        var versions: [Int: KVVersion] = [:]
    }

    var secrets: [Key: Secret] = [:]

    func metadata(of key: KVSecretKey) -> KVMetadata? { secrets[Key(key)]?.metadata }

    func versions(of key: KVSecretKey) -> [KVVersion] {
        (secrets[Key(key)]?.versions.values ?? [:].values).sorted { $0.number < $1.number }.map { version in
            var version = version
            version.data = nil
            return version
        }
    }

    func version(_ number: Int, of key: KVSecretKey) -> KVVersion? { secrets[Key(key)]?.versions[number] }

    mutating func put(_ metadata: KVMetadata, of key: KVSecretKey) {
        secrets[Key(key), default: Secret(metadata: metadata)].metadata = metadata
    }

    /// As every store keeps it (`KVOperations.kvPutVersion`): no data once destroyed, a kept
    /// version's data when none is given.
    mutating func put(_ version: KVVersion, of key: KVSecretKey) throws {
        guard var secret = secrets[Key(key)] else { throw KeychainError.param("KV secret \(key) has no metadata") }
        var stored = version
        if version.destroyed {
            stored.data = nil
        } else if version.data == nil {
            guard let kept = secret.versions[version.number] else {
                throw KeychainError.param("KV secret \(key): a new version \(version.number) needs its data")
            }
            stored.data = kept.data
        }
        secret.versions[version.number] = stored
        secrets[Key(key)] = secret
    }

    mutating func removeVersions(below number: Int, of key: KVSecretKey) -> Int {
        guard var secret = secrets[Key(key)] else { return 0 }
        let removed = secret.versions.keys.filter { $0 < number }
        for version in removed { secret.versions[version] = nil }
        secrets[Key(key)] = secret
        return removed.count
    }

    mutating func remove(_ key: KVSecretKey) -> Bool { secrets.removeValue(forKey: Key(key)) != nil }

    func paths(in group: String, prefix: String) -> [String] {
        let group = Array(group.utf8), prefix = Array(prefix.utf8)
        return secrets.keys.filter { $0.group == group && $0.path.starts(with: prefix) }.map(\.path)
            .sorted { $0.lexicographicallyPrecedes($1) }.map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Webhooks in memory, kept with the rows so that a transaction's deliveries commit with it.
extension InMemoryItemStore: WebhookStore {
    public func putWebhook(_ webhook: Webhook, secret: SecretBytes, replacingSecret: Bool) throws
        -> (stored: Webhook, secretStored: Bool)
    {
        state.withLock { state in
            let existing = state.webhooks.hooks[webhook.name]
            var stored = webhook
            stored.createdAt = existing?.webhook.createdAt ?? webhook.createdAt
            let storesSecret = replacingSecret || existing == nil
            state.webhooks.hooks[webhook.name] = (stored, storesSecret ? secret : existing!.key)
            return (stored, storesSecret)
        }
    }

    public func webhook(named name: String) throws -> Webhook? { state.withLock { $0.webhooks.hooks[name]?.webhook } }

    public func webhooks() throws -> [Webhook] {
        state.withLock { $0.webhooks.hooks.values.map(\.webhook).sorted { $0.name < $1.name } }
    }

    public func removeWebhook(named name: String) throws -> Bool {
        state.withLock { state in
            state.webhooks.pending = state.webhooks.pending.filter { $0.delivery.webhook != name }
            return state.webhooks.hooks.removeValue(forKey: name) != nil
        }
    }

    public func claimDeliveries(at now: Date, lease: TimeInterval, limit: Int) throws -> [ClaimedDelivery] {
        state.withLock { state in
            let due = state.webhooks.pending.indices.filter { state.webhooks.pending[$0].nextAttempt <= now }
                .sorted { state.webhooks.pending[$0].nextAttempt < state.webhooks.pending[$1].nextAttempt }.prefix(limit)
            return due.compactMap { index in
                state.webhooks.pending[index].delivery.attempts += 1
                state.webhooks.pending[index].nextAttempt = now.addingTimeInterval(lease)
                let delivery = state.webhooks.pending[index].delivery
                guard let hook = state.webhooks.hooks[delivery.webhook] else { return nil }
                return ClaimedDelivery(delivery: delivery, url: hook.webhook.url, signer: HMACWebhookSigner(key: hook.key))
            }
        }
    }

    public func settleDelivery(_ id: String, retryAt: Date?) throws {
        state.withLock { state in
            guard let index = state.webhooks.pending.firstIndex(where: { $0.delivery.id == id }) else { return }
            if let retryAt {
                state.webhooks.pending[index].nextAttempt = retryAt
            } else {
                state.webhooks.pending.remove(at: index)
            }
        }
    }

    public func pendingDeliveries() throws -> [WebhookDelivery] {
        state.withLock { $0.webhooks.pending.map(\.delivery).sorted { ($0.event.at, $0.id) < ($1.event.at, $1.id) } }
    }
}

/// The webhooks with their keys, and the outbox.
private struct Webhooks {
    var hooks: [String: (webhook: Webhook, key: SecretBytes)] = [:]
    var pending: [(delivery: WebhookDelivery, nextAttempt: Date)] = []

    mutating func enqueue(_ event: WebhookEvent) {
        for hook in hooks.values.sorted(by: { $0.webhook.name < $1.webhook.name }) where hook.webhook.events.contains(event.kind) {
            pending.append(
                (WebhookDelivery(id: WebhookDelivery.newID(), webhook: hook.webhook.name, event: event, attempts: 0), event.at))
        }
    }
}
