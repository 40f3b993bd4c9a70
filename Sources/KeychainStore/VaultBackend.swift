package import KeychainCore

/// What a storage backend gives the one `Vault`: its stores over its database, the keyring's
/// rows, what it knows of itself for health and metrics, and the few things it does in its own
/// way (recording the lock state for other nodes, taking a database snapshot for a backup).
/// `KeychainSQLite` and `KeychainPostgreSQL` each provide one.
package protocol VaultBackend: Sendable {
    var items: any ItemStore & ReencryptingStore { get }
    var clients: any ClientStore { get }
    var loginRoles: any LoginRoleStore { get }
    var providers: any ProviderStore { get }
    var connectSessions: any ConnectSessionStore { get }
    /// Webhooks and their outbox, kept by the item store, whose transactions enqueue deliveries.
    var webhooks: any WebhookStore { get }
    var keyringStorage: any KeyringStorage { get }
    /// The item writes' group commit since start (metrics; empty where the database shares
    /// WAL flushes itself).
    var commitStatistics: CommitStatistics { get }
    /// See `Vault.writesWaitOffWorkers`.
    var writesWaitOffWorkers: Bool { get }
    var storage: StorageHealth { get }
    var database: DatabaseStatistics? { get }
    var refreshExchangeLock: (any RefreshExchangeLock)? { get }
    /// Holds on provider apps after a `Retry-After`, shared by every node of the database.
    var providerHolds: any ProviderHoldStore { get }
    /// Whether the lock state is shared by several nodes (recorded by `recordLocked`).
    var sharesLockState: Bool { get }

    /// The vault's cluster id: a random UUID (lowercase 8-4-4-4-12) made once with the database,
    /// the same for every node sharing it.
    func clusterID() throws -> String

    /// The release of a live node older than this one, when one shares the database (a rolling
    /// upgrade under way); nil with one node.
    func olderLiveRelease() throws -> String?

    /// Records the lock state where other nodes follow it; nothing to do with one node.
    func recordLocked(_ locked: Bool) throws

    /// Why this backend makes no sealed backups (its database has backups of its own), or nil.
    var backupRefusal: KeychainError? { get }

    /// Copies a consistent snapshot of the database into the new file at `path` (0600, empty).
    func snapshot(into path: String) throws

    /// Stops the backend's background work and closes its connections; idempotent.
    func close()
}
