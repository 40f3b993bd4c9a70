import Foundation
import KeychainCore
import KeychainStore

/// `ProviderHoldStore` over the `provider_holds` table on PostgreSQL (migration 8): every node
/// reads the hold before it calls a token endpoint, so a `Retry-After` one node received holds
/// the others too. Nodes cache no hold.
final class PGProviderHoldStore: ProviderHoldStore {
    private let connections: PGConnections

    init(connections: PGConnections) { self.connections = connections }

    func holdEnd(_ app: ProviderApp, now: Date) throws -> Date? {
        try withConnection { db in
            let rows = try db.execute(
                "SELECT held_until FROM provider_holds WHERE token_endpoint = $1 AND client_id = $2 AND held_until > $3",
                [.text(app.tokenEndpoint), .text(app.clientId), .int8(now.millisecondsSince1970)])
            return rows.count == 1 ? Date(millisecondsSince1970: rows.int64(0, 0)) : nil
        }
    }

    func hold(_ app: ProviderApp, until: Date, now: Date) throws {
        try withConnection { db in
            try db.transaction {
                _ = try db.execute("DELETE FROM provider_holds WHERE held_until <= $1", [.int8(now.millisecondsSince1970)])
                _ = try db.execute(
                    """
                    INSERT INTO provider_holds (token_endpoint, client_id, held_until) VALUES ($1, $2, $3)
                    ON CONFLICT (token_endpoint, client_id) DO UPDATE
                        SET held_until = greatest(provider_holds.held_until, excluded.held_until)
                    """, [.text(app.tokenEndpoint), .text(app.clientId), .int8(until.millisecondsSince1970)])
            }
        }
    }

    private func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        try StoreErrors.map { try connections.withConnection(body) }
    }
}
