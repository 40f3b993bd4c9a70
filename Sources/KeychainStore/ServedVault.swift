public import KeychainCore

/// An open vault as a server runs it, on either storage backend (`Vault` over SQLite, `PGVault`
/// over PostgreSQL): its stores, its keyring, and its administration.
public protocol ServedVault: VaultAdministration {
    var items: any ItemStore { get }
    var clients: any ClientStore { get }
    var tokenIssuer: any ClientTokenIssuer { get }
    /// The data keys (metrics read the term; the audit log derives its key from it).
    var keyring: Keyring { get }
    /// The item writes' group commit since start (metrics; none on PostgreSQL, which shares WAL
    /// flushes itself).
    var commitStatistics: CommitStatistics { get }
    /// Whether writes are better answered off libmicrohttpd's workers. On SQLite a write waits
    /// for a commit it shares with others, and a worker waiting for one would stall its other
    /// connections; on PostgreSQL a write runs on its thread's own connection, which threads
    /// beyond the workers would multiply.
    var writesWaitOffWorkers: Bool { get }
    /// Which backend, and whether it answered lately (health).
    var storage: StorageHealth { get }
    /// The database connections' use and latency (metrics), nil for SQLite's file.
    var database: DatabaseStatistics? { get }
    /// The lock several nodes take around a token exchange, nil with one node.
    var refreshExchangeLock: (any RefreshExchangeLock)? { get }
    /// Stops background work and closes every connection; idempotent.
    func close()
}
