public import Foundation
public import KeychainCore
import KeychainStore

/// `LoginRoleStore` over the `login_roles` table (migration 5): one row per role, its settings as
/// JSON, its version in milliseconds.
final class SQLiteLoginRoleStore: LoginRoleStore {
    private let pool: ConnectionPool

    init(pool: ConnectionPool) { self.pool = pool }

    func putRole(_ role: LoginRole, at time: Date) throws -> (stored: LoginRole, replaced: LoginRole?) {
        try StoreErrors.map {
            try pool.write { db in
                try db.transaction {
                    let replaced = try Self.role(named: role.name, on: db)
                    let version = LoginRoleRecord.version(at: time, after: replaced?.updatedAt.millisecondsSince1970)
                    try db.execute(
                        """
                        INSERT INTO login_roles (name, settings, updated) VALUES (?, ?, ?)
                        ON CONFLICT (name) DO UPDATE SET settings = excluded.settings, updated = excluded.updated
                        """, [.text(role.name), .text(try LoginRoleRecord.encode(role)), .integer(version)])
                    var stored = role
                    stored.updatedAt = Date(millisecondsSince1970: version)
                    return (stored, replaced)
                }
            }
        }
    }

    func role(named name: String) throws -> LoginRole? {
        try StoreErrors.map { try pool.read { db in try Self.role(named: name, on: db) } }
    }

    func roles() throws -> [LoginRole] {
        try StoreErrors.map {
            try pool.read { db in
                try db.query("SELECT settings, updated FROM login_roles ORDER BY name") {
                    try LoginRoleRecord.decode($0.text(0), updatedMilliseconds: $0.int64(1))
                }
            }
        }
    }

    func removeRole(named name: String) throws -> Bool {
        try StoreErrors.map { try pool.write { db in try db.execute("DELETE FROM login_roles WHERE name = ?", [.text(name)]) > 0 } }
    }

    private static func role(named name: String, on db: SQLiteConnection) throws -> LoginRole? {
        try db.query("SELECT settings, updated FROM login_roles WHERE name = ?", [.text(name)]) {
            try LoginRoleRecord.decode($0.text(0), updatedMilliseconds: $0.int64(1))
        }.first
    }
}
