import Foundation
import KeychainAPI
import KeychainCore

extension Router {
    /// Key management and backups (admin clients only; `api.md` "Administration"):
    /// `POST /admin/lock`, `/admin/unlock`, `/admin/rotate[?reencrypt=true]`, `/admin/rekey`,
    /// `GET /admin/backup` (the database file) and `GET /admin/vault` (lock state, terms, jobs).
    ///
    /// Authentication keeps working while the vault is locked (client tokens are hashes in the
    /// database), so every one of these routes still needs an admin token when locked.
    /// The POST routes take no body (an empty body or `{}`).
    public mutating func addVaultRoutes(vault: any VaultAdministration) {
        add(.post, "/admin/lock", access: .admin) { context in
            try context.request.requireNoArguments(allowedQuery: [])
            vault.lock()
            return .json(.object([("status", .integer(0)), ("locked", .bool(true))]))
        }
        add(.post, "/admin/unlock", access: .admin) { context in
            try context.request.requireNoArguments(allowedQuery: [])
            try vault.unlock()
            return .json(.object([("status", .integer(0)), ("locked", .bool(false))]))
        }
        add(.post, "/admin/rotate", access: .admin) { context in
            try context.request.requireNoArguments(allowedQuery: ["reencrypt"])
            var reencrypt = false
            if let value = context.request.queryItems.last(where: { $0.name == "reencrypt" })?.value {
                guard let flag = Bool(value) else { throw KeychainError.param("\"reencrypt\" must be true or false") }
                reencrypt = flag
            }
            let term = try vault.rotate(reencrypt: reencrypt)
            return .json(.object([
                ("status", .integer(0)), ("term", .integer(Int64(term))), ("reencrypting", .bool(reencrypt)),
            ]))
        }
        add(.post, "/admin/rekey", access: .admin) { context in
            try context.request.requireNoArguments(allowedQuery: [])
            let count = try vault.rekey()
            return .json(.object([("status", .integer(0)), ("rewrapped", .integer(Int64(count)))]))
        }
        add(.get, "/admin/backup", access: .admin) { context in
            try context.request.requireNoArguments(allowedQuery: [])
            let bytes = try vault.backupData()
            return HTTPResponse(
                status: 200,
                headers: [
                    ("Content-Type", "application/vnd.sqlite3"),
                    ("Content-Disposition", "attachment; filename=\"keychaind-backup.db\""),
                    ("Cache-Control", "no-store"),
                ],
                body: bytes)
        }
        add(.get, "/admin/vault", access: .admin) { context in
            try context.request.requireNoArguments(allowedQuery: [])
            return .json(VaultAnswers.status(vault.status))
        }
    }
}

enum VaultAnswers {
    /// `{"status":0,"locked":…,"currentTerm":…,"currentTermEncryptions":…,"terms":…,
    /// "reencryption":{…}|null,"lastBackup":"…"|null,"backupsCompleted":…}`
    static func status(_ status: VaultStatus) -> JSONValue {
        var reencryption = JSONValue.null
        if let progress = status.reencryption {
            reencryption = .object([
                ("state", .string(progress.state.rawValue)), ("targetTerm", .integer(Int64(progress.targetTerm))),
                ("total", .integer(Int64(progress.total))), ("done", .integer(Int64(progress.done))),
            ])
        }
        return .object([
            ("status", .integer(0)), ("locked", .bool(status.locked)),
            ("currentTerm", .integer(Int64(status.currentTerm))),
            ("currentTermEncryptions", .integer(Int64(clamping: status.currentTermEncryptions))),
            ("terms", .integer(Int64(status.termCount))), ("reencryption", reencryption),
            ("lastBackup", status.lastBackup.map { .string(RFC3339.format($0)) } ?? .null),
            ("backupsCompleted", .integer(Int64(status.backupsCompleted))),
        ])
    }
}

extension HTTPRequest {
    /// For routes without arguments: the body is empty or `{}`, and the query names only `allowedQuery`.
    func requireNoArguments(allowedQuery: Set<String>) throws {
        for item in queryItems where !allowedQuery.contains(item.name) {
            throw KeychainError.param("unknown query parameter \"\(item.name)\"")
        }
        guard !body.isEmpty else { return }
        let members = try jsonObjectBody()
        if let (key, _) = members.first { throw KeychainError.param("unknown key \"\(key)\"") }
    }
}
