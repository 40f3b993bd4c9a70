public import Foundation

/// Vault's KV version 2 rules over the items' store (docs/api.md, "Tools written for Vault";
/// docs/decisions.md, "A KV secret is a keychain item"): versions, check-and-set, soft delete,
/// undelete, destroy and metadata, as OpenBao keeps them.
///
/// A KV secret is two things written in one transaction: its history (`KVOperations`: metadata and
/// every kept version, sealed) and a generic-password item in the mount's group, service = the
/// path, account empty, `generic` = `KVService.marker`, whose secret is the current version's data
/// (empty while that version is deleted or destroyed). The native routes see and read that item;
/// a native update of its data writes a new version (`writeThrough`), a native delete removes the
/// whole secret (`removeThrough`). No native add or update can set the marker.
///
/// Which mount a caller may reach is decided before (`VaultMount`); these calls take the group.
public final class KVService: Sendable {
    public let store: any ItemStore
    private let clock: @Sendable () -> Date

    /// Versions a secret keeps when its metadata does not say (Vault's mount default).
    public static let defaultMaxVersions = 10
    /// The most a secret's `max_versions` may say.
    public static let maxVersionsLimit = 100
    /// The `generic` value that marks an item as a KV secret's current version.
    public static let marker = AttributeValue.data(Array("keychaind.kv".utf8))

    public init(store: any ItemStore, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.clock = clock
    }

    // MARK: - Reading

    /// What a read of `data/<path>` finds: the secret's metadata and the asked version (its data
    /// nil when deleted or destroyed).
    public struct Found: Sendable {
        public var metadata: KVMetadata
        public var version: KVVersion
        /// Whether the version's data may be answered (neither deleted nor destroyed).
        public var isLive: Bool
    }

    /// The version `number` (nil or 0: the current one); nil when the secret or that version does
    /// not exist (a metadata-only secret has no current version).
    public func read(_ key: KVSecretKey, version number: Int? = nil) throws -> Found? {
        let wanted = number.flatMap { $0 > 0 ? $0 : nil }
        guard let read = try store.kvRead(key, version: wanted), var version = read.version,
            version.number <= read.metadata.currentVersion
        else { return nil }
        let isLive = !version.destroyed && !version.isDeleted(at: clock())
        if !isLive { version.data = nil }
        return Found(metadata: read.metadata, version: version, isLive: isLive)
    }

    /// The secret's metadata and every kept version (without data); nil when there is no secret.
    public func metadata(_ key: KVSecretKey) throws -> (metadata: KVMetadata, versions: [KVVersion])? {
        try store.transaction { transaction in
            guard let metadata = try transaction.kvMetadata(of: key) else { return nil }
            return (metadata, try transaction.kvVersions(of: key))
        }
    }

    /// The names one level below `folder` ("" or ending with `/`): secrets, and folders ending
    /// with `/`, in byte order without repeats; empty when nothing is there.
    public func list(group: String, folder: String) throws -> [String] {
        var names: [String] = []
        for path in try store.kvPaths(in: group, prefix: folder) {
            let rest = path.utf8.dropFirst(folder.utf8.count)
            let name: String
            if let slash = rest.firstIndex(of: UInt8(ascii: "/")) {
                name = String(decoding: rest[..<slash], as: UTF8.self) + "/"
            } else {
                name = String(decoding: rest, as: UTF8.self)
            }
            // The paths come in byte order, so a folder's paths are adjacent and so are its names.
            if names.last.map({ !$0.hasSameUTF8(as: name) }) ?? true { names.append(name) }
        }
        return names
    }

    // MARK: - Writing versions

    /// Writes a new version (`options.cas`: `cas`; 0 means the secret must not exist yet);
    /// answers it and the metadata as written. `data` is a JSON object's text: the API layer
    /// parses bodies (`KVRequest.Write` and `Patch` give nothing else); this layer does not.
    @discardableResult
    public func write(_ key: KVSecretKey, data: SecretBytes, cas: Int?) throws -> (metadata: KVMetadata, version: KVVersion) {
        try checkPath(key)
        return try Self.refusingTakenPaths {
            try store.transaction { transaction in try self.write(key, data: data, cas: cas, in: transaction) }
        }
    }

    /// A JSON merge of the current version (`merge` is given its data and answers the merged
    /// data), written as a new version under the same check-and-set rules. nil when there is no
    /// live current version to patch (Vault answers 404).
    public func patch(_ key: KVSecretKey, cas: Int?, merge: (SecretBytes) throws -> SecretBytes) throws
        -> (metadata: KVMetadata, version: KVVersion)?
    {
        try checkPath(key)
        return try Self.refusingTakenPaths { try store.transaction { transaction in
            guard let metadata = try transaction.kvMetadata(of: key), metadata.currentVersion > 0,
                let current = try transaction.kvVersion(metadata.currentVersion, of: key),
                !current.destroyed, !current.isDeleted(at: self.clock()), let data = current.data
            else { return nil }
            let merged = try merge(data)
            return try self.write(key, data: merged, cas: cas, in: transaction)
        } }
    }

    private func write(_ key: KVSecretKey, data: SecretBytes, cas: Int?, in transaction: any ItemOperations) throws
        -> (metadata: KVMetadata, version: KVVersion)
    {
        let now = clock()
        let written = try Self.record(key, data: data, cas: cas, now: now, in: transaction)
        try mirror(key, data: data, now: now, isNew: written.isNew, in: transaction)
        return (written.metadata, written.version)
    }

    /// Runs a KV write; a clash of the secret's new item with a keychain item is
    /// `KVRefusal.pathTaken` (only that add can clash: the history has no unique key of its own
    /// an item write could meet).
    private static func refusingTakenPaths<Result>(_ write: () throws -> Result) throws -> Result {
        do {
            return try write()
        } catch let error as KeychainError where error.code == .duplicateItem {
            throw KVRefusal.pathTaken
        }
    }

    /// Writes a new version into the secret's history (creating the secret: `isNew`), and trims it.
    private static func record(_ key: KVSecretKey, data: SecretBytes, cas: Int?, now: Date, in transaction: any ItemOperations)
        throws -> (metadata: KVMetadata, version: KVVersion, isNew: Bool)
    {
        let stored = try transaction.kvMetadata(of: key)
        var metadata = stored ?? KVMetadata(createdTime: now, updatedTime: now)
        if metadata.casRequired, cas == nil {
            throw KVRefusal.casRequired
        }
        if let cas, cas != metadata.currentVersion {
            throw KVRefusal.casMismatch
        }
        let version = KVVersion(
            number: metadata.currentVersion + 1, createdTime: now,
            deletionTime: metadata.deleteVersionAfter > 0 ? now.addingTimeInterval(Double(metadata.deleteVersionAfter)) : nil,
            data: data)
        metadata.currentVersion = version.number
        metadata.updatedTime = now
        try transaction.kvPutMetadata(metadata, andVersion: version, of: key)
        return (try trim(key, metadata, in: transaction), version, stored == nil)
    }

    /// Removes the versions past the secret's `max_versions`, oldest first. As OpenBao counts:
    /// once the current version is `max_versions` past `oldestVersion`, `oldestVersion` becomes
    /// the first kept (1 when the history is just full, before anything is removed).
    private static func trim(_ key: KVSecretKey, _ metadata: KVMetadata, in transaction: any ItemOperations) throws -> KVMetadata {
        let keep = metadata.maxVersions > 0 ? metadata.maxVersions : Self.defaultMaxVersions
        guard metadata.currentVersion - metadata.oldestVersion >= keep else { return metadata }
        var trimmed = metadata
        trimmed.oldestVersion = metadata.currentVersion - keep + 1
        try transaction.kvRemoveVersions(below: trimmed.oldestVersion, of: key)
        try transaction.kvPutMetadata(trimmed, of: key)
        return trimmed
    }

    // MARK: - Deleting, undeleting, destroying

    /// What `delete/`, `undelete/`, `destroy/` and `DELETE data/` do to a version.
    public enum VersionChange: Sendable {
        case delete, undelete, destroy
    }

    /// Applies `change` to each listed version that is kept (others are ignored, as Vault does);
    /// `versions` nil: the current version (`DELETE data/<path>`). Nothing happens to a secret
    /// that does not exist.
    public func change(_ change: VersionChange, versions: [Int]?, of key: KVSecretKey) throws {
        try store.transaction { transaction in
            guard let metadata = try transaction.kvMetadata(of: key) else { return }
            let now = self.clock()
            let numbers = Set(versions ?? [metadata.currentVersion])
            for number in numbers.sorted() {
                guard var version = try transaction.kvVersion(number, of: key) else { continue }
                switch change {
                case .delete:
                    guard !version.destroyed, !version.isDeleted(at: now) else { continue }
                    version.deletionTime = now
                case .undelete:
                    guard !version.destroyed, version.deletionTime != nil else { continue }
                    version.deletionTime = nil
                case .destroy:
                    guard !version.destroyed else { continue }
                    version.destroyed = true
                    version.data = nil
                }
                try transaction.kvPutVersion(version, of: key)
                if number == metadata.currentVersion {
                    let live = !version.destroyed && !version.isDeleted(at: now)
                    try self.mirror(key, data: live ? version.data : nil, now: now, isNew: false, in: transaction)
                }
            }
        }
    }

    // MARK: - Metadata

    /// A write of `metadata/<path>`: the settings it names (nil: unchanged).
    public struct MetadataChange: Sendable {
        public var maxVersions: Int?
        public var casRequired: Bool?
        public var deleteVersionAfter: Int?
        public var customMetadata: [String: String]?

        public init(maxVersions: Int? = nil, casRequired: Bool? = nil, deleteVersionAfter: Int? = nil, customMetadata: [String: String]? = nil) {
            self.maxVersions = maxVersions
            self.casRequired = casRequired
            self.deleteVersionAfter = deleteVersionAfter
            self.customMetadata = customMetadata
        }
    }

    /// Writes the settings, creating a secret without versions when none exists. Custom
    /// metadata: at most 64 keys of 128 bytes, values of 512 (errSecParam past them).
    public func writeMetadata(_ change: MetadataChange, of key: KVSecretKey) throws {
        try checkPath(key)
        if let maxVersions = change.maxVersions, !(0...Self.maxVersionsLimit).contains(maxVersions) {
            throw KeychainError.param("max_versions must be between 0 and \(Self.maxVersionsLimit)")
        }
        if let seconds = change.deleteVersionAfter, seconds < 0 {
            throw KeychainError.param("delete_version_after cannot be negative")
        }
        if let custom = change.customMetadata { try Self.checkCustomMetadata(custom) }
        try Self.refusingTakenPaths { try store.transaction { transaction in
            let now = self.clock()
            let stored = try transaction.kvMetadata(of: key)
            var metadata = stored ?? KVMetadata(createdTime: now, updatedTime: now)
            if let maxVersions = change.maxVersions { metadata.maxVersions = maxVersions }
            if let casRequired = change.casRequired { metadata.casRequired = casRequired }
            if let seconds = change.deleteVersionAfter { metadata.deleteVersionAfter = seconds }
            if let custom = change.customMetadata { metadata.customMetadata = custom }
            metadata.updatedTime = now
            metadata.metadataVersion += 1
            try transaction.kvPutMetadata(metadata, of: key)
            if stored == nil { try self.mirror(key, data: nil, now: now, isNew: true, in: transaction) }
        } }
    }

    /// Removes the secret: its metadata, every version and its item. False when there was none.
    @discardableResult
    public func remove(_ key: KVSecretKey) throws -> Bool {
        try store.transaction { transaction in
            guard try transaction.kvRemove(key) else { return false }
            _ = try transaction.delete(Self.itemFilter(key))
            return true
        }
    }

    static func checkCustomMetadata(_ custom: [String: String]) throws {
        guard custom.count <= 64 else { throw KeychainError.param("custom_metadata holds at most 64 keys") }
        for (name, value) in custom {
            guard !name.isEmpty, name.utf8.count <= 128 else {
                throw KeychainError.param("a custom_metadata key is 1 to 128 bytes")
            }
            guard value.utf8.count <= 512 else {
                throw KeychainError.param("a custom_metadata value holds at most 512 bytes (key \(name))")
            }
        }
    }

    // MARK: - The item

    /// The item filter of the secret's item (whatever its marker).
    static func itemFilter(_ key: KVSecretKey) -> ItemFilter {
        ItemFilter(
            itemClass: .genericPassword, accessGroups: [key.group],
            equal: [.service: .string(key.path), .account: .string("")])
    }

    /// Writes the secret's item: `data` (nil: empty) as its secret. `isNew`: the secret did not
    /// exist before this transaction, so neither did its item (one added now that clashes is a
    /// keychain item holding the path: `refusingTakenPaths`); else the item is updated in place
    /// (added again only if it went missing).
    private func mirror(_ key: KVSecretKey, data: SecretBytes?, now rawNow: Date, isNew: Bool, in transaction: any ItemOperations)
        throws
    {
        let now = rawNow.truncatedToMilliseconds
        let secret = data ?? SecretBytes([UInt8]())
        if !isNew {
            var filter = Self.itemFilter(key)
            filter.equal[.generic] = Self.marker
            if try transaction.update(filter, with: ItemChanges(secret: secret, modificationDate: now)) > 0 { return }
        }
        let attributes: [Attribute: AttributeValue] = [
            .accessGroup: .string(key.group), .service: .string(key.path), .account: .string(""),
            .generic: Self.marker, .synchronizable: .bool(false), .accessible: .string("whenUnlocked"),
            .creationDate: .date(now), .modificationDate: .date(now),
        ]
        try KeychainService.checkValueSizes(attributes)
        try transaction.add([Item(itemClass: .genericPassword, persistentRef: .random(), attributes: attributes, secret: secret)])
    }

    /// A path a KV secret may have: not empty, no empty segment, not under `tokens/` (the
    /// service tokens' paths).
    private func checkPath(_ key: KVSecretKey) throws {
        guard !key.path.isEmpty, !key.path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).contains(where: \.isEmpty)
        else { throw KeychainError.param("a secret's path has no empty segment and does not end with /") }
        if key.path.hasSameUTF8(as: "tokens") || key.path.utf8.starts(with: "tokens/".utf8) {
            throw KeychainError.param("tokens/ paths hold service tokens, not KV secrets")
        }
    }

    // MARK: - The native routes' writes

    /// Whether `item` is a KV secret's item.
    public static func isKVItem(_ item: Item) -> Bool {
        item.itemClass == .genericPassword && item[.generic] == marker
    }

    /// A native update's data written as a new version of the KV secret `item` is, its item
    /// updated by the native write itself: errSecParam for a secret with `cas_required`, and for
    /// data `checkData` refuses (no JSON object), or any data when there is no `checkData`.
    static func writeThrough(
        _ item: Item, data: SecretBytes, checkData: (@Sendable (SecretBytes) throws -> Void)?, now: Date,
        in transaction: any ItemOperations
    ) throws {
        guard case .string(let path)? = item[.service] else { return }
        let key = KVSecretKey(group: item.accessGroup, path: path)
        guard let checkData, (try? checkData(data)) != nil else {
            throw KeychainError.param("the data of a KV secret (\(key)) is a JSON object")
        }
        guard let metadata = try transaction.kvMetadata(of: key) else { return }
        guard !metadata.casRequired else {
            throw KeychainError.param("the KV secret \(key) requires check-and-set: write it through /v1/\(key.group)/data/")
        }
        _ = try record(key, data: data, cas: nil, now: now, in: transaction)
    }

    /// A native delete of the KV secret `item` is: its history goes with it.
    static func removeThrough(_ item: Item, in transaction: any ItemOperations) throws {
        guard case .string(let path)? = item[.service] else { return }
        try transaction.kvRemove(KVSecretKey(group: item.accessGroup, path: path))
    }
}

/// Why a KV write was refused, in Vault's words (answered 400 on the Vault surface; errSecParam's
/// detail natively).
public enum KVRefusal: Error, Sendable {
    case casRequired
    case casMismatch
    case pathTaken

    public var message: String {
        switch self {
        case .casRequired: "check-and-set parameter required for this call"
        case .casMismatch: "check-and-set parameter did not match the current version"
        case .pathTaken: "the path is held by a keychain item that is not a KV secret"
        }
    }
}
