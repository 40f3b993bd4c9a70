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
    /// Whether an item write submitted now would wait for a commit in flight.
    var commitInFlight: Bool { get }
    /// Which backend, and whether it answered lately (health).
    var storage: StorageHealth { get }
    /// The database connections' use and latency (metrics), nil for SQLite's file.
    var database: DatabaseStatistics? { get }
    /// The lock several nodes take around a token exchange, nil with one node.
    var refreshExchangeLock: (any RefreshExchangeLock)? { get }
    /// Stops background work and closes every connection; idempotent.
    func close()
}
