public import Foundation
public import KeychainCore
import KeychainStore

/// `ClientStore` over the `clients` and `tokens` tables (`ClientTable`, `TokenTable`). Lookups go
/// through the UNIQUE index on the token hash; the fetched hash is then compared in constant
/// time. Found holders are kept in a `ClientCache`: a change to the clients empties it, a
/// revocation drops its token's entries.
public final class SQLiteClientStore: ClientStore {
    let pool: ConnectionPool
    private let cache = ClientCache()

    init(pool: ConnectionPool) { self.pool = pool }

    public func addClient(_ client: Client, token: NewToken) throws {
        try write { db in
            try ClientTable.insert(client, on: db)
            try TokenTable.insert(token, loginGroups: nil, on: db)
        }
    }

    public func holder(ofTokenHash tokenHash: [UInt8]) throws -> TokenHolder? {
        try cache.holder(forTokenHash: tokenHash) { tokenHash in
            try StoreErrors.map {
                let found = try pool.read { db in try TokenTable.holder(forTokenHash: tokenHash, on: db) }
                guard let (holder, stored) = found, constantTimeEqual(stored, tokenHash) else { return nil }
                return holder
            }
        }
    }

    public func holder(ofAccessor accessor: String) throws -> TokenHolder? {
        try read { db in try TokenTable.holder(ofAccessor: accessor, on: db)?.0 }
    }

    public func clients() throws -> [Client] {
        try read { db in try ClientTable.all(on: db) }
    }

    public func client(named name: String) throws -> Client? {
        try read { db in try ClientTable.client(named: name, on: db) }
    }

    public func removeClient(named name: String, now: Date) throws -> Bool {
        try cache.changing { try write { db in try ClientTable.remove(named: name, now: now, on: db) } }
    }

    public func replaceToken(ofClient name: String, token: NewToken) throws -> Bool {
        try cache.changing {
            try write { db in
                guard try ClientTable.client(named: name, on: db) != nil else { return false }
                _ = try TokenTable.revokeAll(ofClient: name, on: db)
                try TokenTable.insert(token, loginGroups: nil, on: db)
                return true
            }
        }
    }

    public func addLoginToken(_ token: NewToken, accessGroups: [String], liveLimit: Int, now: Date) throws -> Bool {
        guard case .login(let role) = token.record.source else { preconditionFailure("a login token has a login role") }
        return try write(durable: false) { db in
            guard try TokenTable.loginRoleHasRoom(role, limit: liveLimit, now: now, on: db) else { return false }
            try TokenTable.insert(token, loginGroups: accessGroups, on: db)
            return true
        }
    }

    public func tokens(of owner: TokenOwner, now: Date) throws -> [TokenRecord] {
        try read { db in try TokenTable.live(of: owner, now: now, on: db) }
    }

    public func adminHasTokenWithoutExpiry() throws -> Bool {
        try read { db in try TokenTable.adminHasTokenWithoutExpiry(on: db) }
    }

    public func renewToken(accessor: String, expiresAt: Date, now: Date) throws -> TokenRecord? {
        try write(durable: false) { db in try TokenTable.renew(accessor: accessor, expiresAt: expiresAt, now: now, on: db) }
    }

    public func revokeToken(accessor: String, now: Date) throws -> Bool {
        guard let hash = try write({ db in try TokenTable.revoke(accessor: accessor, now: now, on: db) }) else { return false }
        cache.invalidate(tokenHash: hash)
        return true
    }

    public func revokeLoginTokens(role: String) throws -> Int {
        try cache.changing { try write { db in try TokenTable.revokeAll(ofLoginRole: role, on: db) } }
    }

    public func purgeTokens(expiredBefore cutoff: Date) throws -> Int {
        try write { db in try TokenTable.purge(expiredBefore: cutoff, on: db) }
    }

    private func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try StoreErrors.map { try pool.read(body) }
    }

    /// Runs `body` as one transaction on the writer (writes are serialised: nothing comes
    /// between a check it makes and the change it makes). `durable: false` commits without
    /// waiting for the disk (`synchronous=NORMAL`; the next durable commit or checkpoint syncs
    /// it): for a login's token and a renewal, which a power failure may only take back (the
    /// workload logs in again, the token expires sooner), never for what must not come back.
    private func write<T>(durable: Bool = true, _ body: (SQLiteConnection) throws -> T) throws -> T {
        try StoreErrors.map {
            try pool.write { db in
                guard !durable else { return try db.transaction { try body(db) } }
                try db.executeScript("PRAGMA synchronous=NORMAL")
                defer { try? db.executeScript("PRAGMA synchronous=FULL") }
                return try db.transaction { try body(db) }
            }
        }
    }
}
