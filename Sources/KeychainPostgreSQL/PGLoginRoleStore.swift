import Foundation
import KeychainCore
import KeychainStore

/// `LoginRoleStore` over the `login_roles` table on PostgreSQL (migration 6), as on SQLite. Nodes
/// cache no role: a login reads its role, so a change made on one node holds on every node.
final class PGLoginRoleStore: LoginRoleStore {
    private let connections: PGConnections

    init(connections: PGConnections) { self.connections = connections }

    func putRole(_ role: LoginRole, at time: Date) throws -> (stored: LoginRole, replaced: LoginRole?) {
        try withConnection { db in
            try db.transaction {
                let previous = try db.execute("SELECT settings, updated FROM login_roles WHERE name = $1 FOR UPDATE", [.text(role.name)])
                let replaced = previous.count == 1
                    ? try LoginRoleRecord.decode(previous.text(0, 0), updatedMilliseconds: previous.int64(0, 1)) : nil
                let version = LoginRoleRecord.version(at: time, after: replaced?.updatedAt.millisecondsSince1970)
                try db.execute(
                    """
                    INSERT INTO login_roles (name, settings, updated) VALUES ($1, $2, $3)
                    ON CONFLICT (name) DO UPDATE SET settings = excluded.settings, updated = excluded.updated
                    """, [.text(role.name), .text(try LoginRoleRecord.encode(role)), .int8(version)])
                var stored = role
                stored.updatedAt = Date(millisecondsSince1970: version)
                return (stored, replaced)
            }
        }
    }

    func role(named name: String) throws -> LoginRole? {
        try withConnection { db in
            let rows = try db.execute("SELECT settings, updated FROM login_roles WHERE name = $1", [.text(name)])
            return rows.count == 1 ? try LoginRoleRecord.decode(rows.text(0, 0), updatedMilliseconds: rows.int64(0, 1)) : nil
        }
    }

    func roles() throws -> [LoginRole] {
        try withConnection { db in
            let rows = try db.execute("SELECT settings, updated FROM login_roles ORDER BY name COLLATE \"C\"")
            return try (0..<rows.count).map { try LoginRoleRecord.decode(rows.text($0, 0), updatedMilliseconds: rows.int64($0, 1)) }
        }
    }

    func removeRole(named name: String) throws -> Bool {
        try withConnection { db in try db.execute("DELETE FROM login_roles WHERE name = $1", [.text(name)]).affectedRows > 0 }
    }

    private func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        try StoreErrors.map { try connections.withConnection(body) }
    }
}
