public import Foundation

/// Where a KV version 2 secret lives: its mount (an access group, docs/api.md "Tools written for
/// Vault") and its path inside the mount (no leading or trailing `/`, no empty segment).
public struct KVSecretKey: Hashable, Sendable, CustomStringConvertible {
    public var group: String
    public var path: String

    public init(group: String, path: String) {
        self.group = group
        self.path = path
    }

    public var description: String { "\(group)/\(path)" }
}

/// A KV secret's settings and the bounds of its history, as Vault's `metadata/` answers them.
public struct KVMetadata: Sendable, Equatable {
    /// Versions kept; 0: the mount's default (10).
    public var maxVersions: Int
    /// Whether every write must carry `options.cas`.
    public var casRequired: Bool
    /// Seconds after which a new version counts as deleted; 0: never.
    public var deleteVersionAfter: Int
    /// Not secret by Vault's rules, but sealed in storage like everything a client writes.
    public var customMetadata: [String: String]
    /// The newest version written (0: none yet, a secret whose metadata alone was written).
    public var currentVersion: Int
    /// The oldest version still kept (0: none).
    public var oldestVersion: Int
    public var createdTime: Date
    public var updatedTime: Date
    /// How many times the settings were written (`metadata/` writes; Vault's `current_metadata_version`).
    public var metadataVersion: Int

    public init(
        maxVersions: Int = 0, casRequired: Bool = false, deleteVersionAfter: Int = 0,
        customMetadata: [String: String] = [:], currentVersion: Int = 0, oldestVersion: Int = 0,
        createdTime: Date, updatedTime: Date, metadataVersion: Int = 0
    ) {
        self.metadataVersion = metadataVersion
        self.maxVersions = maxVersions
        self.casRequired = casRequired
        self.deleteVersionAfter = deleteVersionAfter
        self.customMetadata = customMetadata
        self.currentVersion = currentVersion
        self.oldestVersion = oldestVersion
        self.createdTime = createdTime
        self.updatedTime = updatedTime
    }

    /// What `customMetadata` counts for against the group's attribute bytes: each key's and
    /// value's UTF-8 bytes.
    public var customMetadataBytes: Int {
        customMetadata.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
    }
}

/// One version of a KV secret.
public struct KVVersion: Sendable, Equatable {
    public var number: Int
    public var createdTime: Date
    /// When the version was (or, with `delete_version_after`, will count as) deleted; nil: never.
    public var deletionTime: Date?
    public var destroyed: Bool
    /// The version's data, a JSON object's UTF-8 text; nil once destroyed, or when not read.
    public var data: SecretBytes?

    public init(number: Int, createdTime: Date, deletionTime: Date? = nil, destroyed: Bool = false, data: SecretBytes?) {
        self.number = number
        self.createdTime = createdTime
        self.deletionTime = deletionTime
        self.destroyed = destroyed
        self.data = data
    }

    /// Whether the version counts as deleted at `now` (soft-deleted, or past its `delete_version_after`).
    public func isDeleted(at now: Date) -> Bool {
        if let deletionTime { return deletionTime <= now }
        return false
    }
}

/// The history of KV secrets, kept beside the items and written in the items' transactions
/// (`ItemStore.transaction(_:)`): a secret's metadata row and one row per kept version, each
/// version's data sealed as an item's secret is. The KV rules (`KVService`) decide what to
/// write; the store keeps it. Usage: every version's data counts against its group's secret
/// bytes, `customMetadata` against its attribute bytes (errSecDiskFull past the quota).
///
/// Implementations: SQLite, PostgreSQL and the in-memory store, all checked by `KVConformance`.
public protocol KVOperations {
    /// The secret's metadata; nil when no such secret exists.
    func kvMetadata(of key: KVSecretKey) throws -> KVMetadata?

    /// Every kept version of the secret, oldest first, without data.
    func kvVersions(of key: KVSecretKey) throws -> [KVVersion]

    /// One version with its data opened (nil data once destroyed); nil when it is not kept.
    func kvVersion(_ number: Int, of key: KVSecretKey) throws -> KVVersion?

    /// Writes the metadata, creating the secret when it does not exist.
    func kvPutMetadata(_ metadata: KVMetadata, of key: KVSecretKey) throws

    /// Writes one version (a new one, or a kept one's deletion time, destroyed flag and data),
    /// for a secret whose metadata exists (else errSecParam). A destroyed version keeps no data;
    /// nil data leaves a kept version's data as it is, and is errSecParam for a new one that is
    /// not destroyed. The metadata is not changed (`currentVersion` is the caller's to write).
    func kvPutVersion(_ version: KVVersion, of key: KVSecretKey) throws

    /// `kvPutMetadata` then `kvPutVersion`, as one operation: how a new version is written with
    /// the metadata that names it current (a store may write both in one row; see `KVTable`).
    func kvPutMetadata(_ metadata: KVMetadata, andVersion version: KVVersion, of key: KVSecretKey) throws

    /// Removes the versions numbered below `number`; returns how many. The metadata is not
    /// changed (`oldestVersion` is the caller's to write).
    @discardableResult
    func kvRemoveVersions(below number: Int, of key: KVSecretKey) throws -> Int

    /// Removes the secret, its metadata and every version; false when it did not exist.
    @discardableResult
    func kvRemove(_ key: KVSecretKey) throws -> Bool

    /// The secret's metadata and its version `number` (nil: the current one) with its data
    /// opened (nil: not kept), read together; nil when there is no such secret. The read of
    /// `data/<path>` (a store may answer it from a cache of its own; see `SQLiteItemStore`).
    func kvRead(_ key: KVSecretKey, version number: Int?) throws -> (metadata: KVMetadata, version: KVVersion?)?

    /// The paths of the group's secrets that begin with `prefix` (every one for ""), in
    /// ascending byte order.
    func kvPaths(in group: String, prefix: String) throws -> [String]
}

extension KVOperations {
    public func kvPutMetadata(_ metadata: KVMetadata, andVersion version: KVVersion, of key: KVSecretKey) throws {
        try kvPutMetadata(metadata, of: key)
        try kvPutVersion(version, of: key)
    }

    public func kvRead(_ key: KVSecretKey, version number: Int?) throws -> (metadata: KVMetadata, version: KVVersion?)? {
        guard let metadata = try kvMetadata(of: key) else { return nil }
        let wanted = number ?? metadata.currentVersion
        return (metadata, wanted > 0 ? try kvVersion(wanted, of: key) : nil)
    }
}
