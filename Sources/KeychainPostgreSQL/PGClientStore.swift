import Foundation
import KeychainCore
import KeychainStore

/// `ClientStore` over the `clients` and `tokens` tables on PostgreSQL (`PGClientTable`,
/// `PGTokenTable`), with the same per-thread `ClientCache` as on SQLite. A change made on this
/// node makes it stale at once; one made on another node does when `PGClusterWatcher` hears of
/// it (at once when the announcement arrives, within a second when it is lost). A revocation is
/// announced with its token's hash, so other nodes drop that entry alone.
final class PGClientStore: ClientStore {
    private let connections: PGConnections
    let cache = ClientCache()

    init(connections: PGConnections) { self.connections = connections }

    func addClient(_ client: Client, token: NewToken) throws {
        try cache.changing { try withConnection { db in try PGClientTable.insert(client, token: token, on: db) } }
    }

    func holder(ofTokenHash tokenHash: [UInt8]) throws -> TokenHolder? {
        try cache.holder(forTokenHash: tokenHash) { tokenHash in
            let found = try withConnection { db in try PGTokenTable.holder(forTokenHash: tokenHash, on: db) }
            guard let (holder, stored) = found, constantTimeEqual(stored, tokenHash) else { return nil }
            return holder
        }
    }

    func holder(ofAccessor accessor: String) throws -> TokenHolder? {
        try withConnection { db in try PGTokenTable.holder(ofAccessor: accessor, on: db)?.0 }
    }

    func clients() throws -> [Client] {
        try withConnection { db in try PGClientTable.all(on: db) }
    }

    func client(named name: String) throws -> Client? {
        try withConnection { db in try PGClientTable.client(named: name, on: db) }
    }

    func removeClient(named name: String, now: Date) throws -> Bool {
        try cache.changing { try withConnection { db in try PGClientTable.remove(named: name, now: now, on: db) } }
    }

    func replaceToken(ofClient name: String, token: NewToken) throws -> Bool {
        try cache.changing {
            try withConnection { db in try PGClientTable.replaceToken(ofClient: name, token: token, on: db) }
        }
    }

    func addLoginToken(_ token: NewToken, accessGroups: [String], liveLimit: Int, now: Date) throws -> Bool {
        guard case .login(let role) = token.record.source else { preconditionFailure("a login token has a login role") }
        return try withConnection { db in
            try db.transaction {
                guard try PGTokenTable.loginRoleHasRoom(role, limit: liveLimit, now: now, on: db) else { return false }
                try PGTokenTable.insert(token, loginGroups: accessGroups, on: db)
                return true
            }
        }
    }

    func tokens(of owner: TokenOwner, now: Date) throws -> [TokenRecord] {
        try withConnection { db in try PGTokenTable.live(of: owner, now: now, on: db) }
    }

    func adminHasTokenWithoutExpiry() throws -> Bool {
        try withConnection { db in try PGTokenTable.adminHasTokenWithoutExpiry(on: db) }
    }

    func renewToken(accessor: String, expiresAt: Date, now: Date) throws -> TokenRecord? {
        try withConnection { db in try PGTokenTable.renew(accessor: accessor, expiresAt: expiresAt, now: now, on: db) }
    }

    func revokeToken(accessor: String, now: Date) throws -> Bool {
        let hash = try withConnection { db in
            try db.transaction { () -> [UInt8]? in
                guard let hash = try PGTokenTable.revoke(accessor: accessor, now: now, on: db) else { return nil }
                try PGClusterState.announceRevocation(of: hash, on: db)
                return hash
            }
        }
        guard let hash else { return false }
        cache.invalidate(tokenHash: hash)
        return true
    }

    func revokeLoginTokens(role: String) throws -> Int {
        try cache.changing {
            try withConnection { db in
                try PGClientTable.changing(on: db) { try PGTokenTable.revokeAll(ofLoginRole: role, on: db) }
            }
        }
    }

    func purgeTokens(expiredBefore cutoff: Date) throws -> Int {
        try withConnection { db in try PGTokenTable.purge(expiredBefore: cutoff, on: db) }
    }

    private func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        try StoreErrors.map { try connections.withConnection(body) }
    }
}
