public import Foundation
public import KeychainCore
import KeychainStore

/// `ProviderHoldStore` over the `provider_holds` table (migration 7): one row per held provider
/// app, so that a hold outlives a restart.
final class SQLiteProviderHoldStore: ProviderHoldStore {
    private let pool: ConnectionPool

    init(pool: ConnectionPool) { self.pool = pool }

    func holdEnd(_ app: ProviderApp, now: Date) throws -> Date? {
        try StoreErrors.map {
            try pool.read { db in
                try db.scalarInt(
                    "SELECT held_until FROM provider_holds WHERE token_endpoint = ? AND client_id = ? AND held_until > ?",
                    [.text(app.tokenEndpoint), .text(app.clientId), .integer(now.millisecondsSince1970)])
            }
        }.map(Date.init(millisecondsSince1970:))
    }

    func hold(_ app: ProviderApp, until: Date, now: Date) throws {
        try StoreErrors.map {
            try pool.write { db in
                try db.transaction {
                    _ = try db.execute("DELETE FROM provider_holds WHERE held_until <= ?", [.integer(now.millisecondsSince1970)])
                    _ = try db.execute(
                        """
                        INSERT INTO provider_holds (token_endpoint, client_id, held_until) VALUES (?, ?, ?)
                        ON CONFLICT (token_endpoint, client_id) DO UPDATE SET held_until = max(held_until, excluded.held_until)
                        """, [.text(app.tokenEndpoint), .text(app.clientId), .integer(until.millisecondsSince1970)])
                }
            }
        }
    }
}
