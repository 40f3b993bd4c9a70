package import KeychainCore
package import KeychainStore
package import Logging

/// One node's storage: every table in one SQLite database (WAL), its writes in group commits
/// off the request threads, its reads through a pool of reading connections.
package final class SQLiteBackend: VaultBackend {
    package let pool: ConnectionPool
    private let itemStore: SQLiteItemStore
    private let clientStore: SQLiteClientStore
    private let loginRoleStore: SQLiteLoginRoleStore
    private let providerStore: SQLiteProviderStore
    private let connectSessionStore: SQLiteConnectSessionStore
    private let providerHoldStore: SQLiteProviderHoldStore

    package init(pool: ConnectionPool, keyring: Keyring, logger: Logger, quota: GroupQuota = .unlimited) {
        self.pool = pool
        itemStore = SQLiteItemStore(pool: pool, keyring: keyring, logger: logger, quota: quota)
        clientStore = SQLiteClientStore(pool: pool)
        loginRoleStore = SQLiteLoginRoleStore(pool: pool)
        providerStore = SQLiteProviderStore(pool: pool, keyring: keyring)
        connectSessionStore = SQLiteConnectSessionStore(pool: pool, keyring: keyring)
        providerHoldStore = SQLiteProviderHoldStore(pool: pool)
    }

    package var items: any ItemStore & ReencryptingStore { itemStore }
    package var clients: any ClientStore { clientStore }
    package var loginRoles: any LoginRoleStore { loginRoleStore }
    package var providers: any ProviderStore { providerStore }
    package var connectSessions: any ConnectSessionStore { connectSessionStore }
    package var webhooks: any WebhookStore { itemStore }
    package func clusterID() throws -> String {
        guard let id = try pool.read({ db in try db.scalarText("SELECT cluster_id FROM vault_identity WHERE id = 1") }) else {
            throw KeychainError.io("the database has no cluster id (vault_identity is empty)")
        }
        return id
    }

    package func olderLiveRelease() -> String? { nil }
    package var keyringStorage: any KeyringStorage { KeyringTable(pool: pool) }
    package var commitStatistics: CommitStatistics { itemStore.commitStatistics }
    package var writesWaitOffWorkers: Bool { true }
    package var storage: StorageHealth { StorageHealth(backend: .sqlite, reachable: true) }
    package var database: DatabaseStatistics? { nil }
    package var refreshExchangeLock: (any RefreshExchangeLock)? { nil }
    package var providerHolds: any ProviderHoldStore { providerHoldStore }
    package var sharesLockState: Bool { false }

    package func recordLocked(_ locked: Bool) {}

    package var backupRefusal: KeychainError? { nil }

    /// The database as it is, less the connect sessions (docs/api.md, "Upgrades": a backup holds
    /// no pending session), deleted from the copy with `secure_delete` so their rows are zeroed.
    package func snapshot(into path: String) throws {
        try pool.read { db in try db.backup(into: path) }
        let copy = try SQLiteConnection(path: path, wal: false)
        defer { copy.close() }
        try copy.executeScript("PRAGMA secure_delete = ON; DELETE FROM connect_sessions;")
    }

    package func close() { pool.close() }
}

extension Vault {
    /// A vault on the SQLite database `pool` has open.
    package convenience init(
        pool: ConnectionPool, keyring: Keyring, directory: DataDirectory? = nil, logger: Logger,
        quota: GroupQuota = .unlimited
    ) throws {
        try self.init(
            backend: SQLiteBackend(pool: pool, keyring: keyring, logger: logger, quota: quota), keyring: keyring,
            directory: directory, logger: logger)
    }

    /// The SQLite database's connections, when the vault is on SQLite (tests and benchmarks
    /// read the tables directly).
    package var sqlitePool: ConnectionPool? { (backend as? SQLiteBackend)?.pool }
}
