import KeychainCore
import KeychainStore

/// `ItemStore` over PostgreSQL for several active nodes: every find and write goes to the
/// database on the calling thread's connection, so a write acknowledged by one node is read by
/// any other right after. Nothing is cached: SQLite's find cache and lookup map hold only what
/// one process wrote (docs/decisions.md, "PostgreSQL: several active nodes").
///
/// A transaction is one PostgreSQL transaction (READ COMMITTED), committed with
/// `synchronous_commit` as the server sets it (on by default: durable before acknowledged).
/// PostgreSQL shares WAL flushes among commits that arrive together, so no group commit of our own.
final class PGItemStore: ItemStore {
    let connections: PGConnections
    let keyring: Keyring
    /// Where this node reserves the encryptions it seals under (`Keyring.seal(_:binding:reservingFrom:)`).
    let reservations: PGKeyringStorage
    let quota: GroupQuota

    init(connections: PGConnections, keyring: Keyring, reservations: PGKeyringStorage, quota: GroupQuota = .unlimited) {
        self.connections = connections
        self.keyring = keyring
        self.reservations = reservations
        self.quota = quota
    }

    func find(
        _ filter: ItemFilter, limit: Int?, after cursor: ItemCursor?, reading contents: ItemContents, maxBytes: Int?
    ) throws -> ItemPage {
        try StoreErrors.map {
            try keyring.withKeys {
                try connections.withConnection { db in
                    try PGItemTransaction.page(
                        filter, limit: limit, after: cursor, contents: contents, maxBytes: maxBytes, keyring: keyring, on: db)
                }
            }
        }
    }

    func transaction<Result>(_ body: (any ItemOperations) throws -> Result) throws -> Result {
        var thrownByBody: (any Error)?
        do {
            return try keyring.withKeys {
                try connections.withConnection { db in
                    try db.transaction {
                        let transaction = PGItemTransaction(db: db, keyring: keyring, reservations: reservations)
                        let result: Result
                        do {
                            result = try body(transaction)
                        } catch {
                            thrownByBody = error
                            throw error
                        }
                        if let failure = transaction.failure { throw failure }
                        try transaction.settleUsage(quota: quota)
                        return result
                    }
                }
            }
        } catch {
            throw thrownByBody ?? StoreErrors.keychainError(for: error)
        }
    }

    /// Works while locked too (it reads no secret): metrics keep counting items.
    func countByClass() throws -> [ItemClass: Int] {
        try StoreErrors.map { try connections.withConnection { db in try PGItemTable.countByClass(on: db) } }
    }
}
