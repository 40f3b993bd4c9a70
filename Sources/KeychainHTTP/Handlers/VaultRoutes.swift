import KeychainAPI
public import KeychainCore

extension Router {
    /// Key management and backups (admin clients only; docs/api.md, "Administration"):
    /// `POST /admin/lock`, `/admin/unlock`, `/admin/rotate[?reencrypt=true]`, `/admin/rekey`,
    /// `GET /admin/backup` (a sealed backup of the database: `keychaind restore` opens it) and `GET /admin/vault` (lock state, terms, jobs).
    ///
    /// Authentication keeps working while the vault is locked (client tokens are hashes in the
    /// database), so every one of these routes still needs an admin token when locked.
    /// The POST routes take no body (an empty body or `{}`).
    public mutating func addVaultRoutes(vault: any VaultAdministration) {
        add(.post, "/admin/lock", access: .admin, audit: .none) { context in
            _ = try context.vaultRequest()
            vault.lock()
            return .json(StatusAnswer.locked(true))
        }
        add(.post, "/admin/unlock", access: .admin, audit: .none) { context in
            _ = try context.vaultRequest()
            try vault.unlock()
            return .json(StatusAnswer.locked(false))
        }
        add(.post, "/admin/rotate", access: .admin, audit: .none) { context in
            let request = try context.vaultRequest(allowingReencrypt: true)
            let term = try vault.rotate(reencrypt: request.reencrypt)
            return .json(StatusAnswer.rotated(term: term, reencrypting: request.reencrypt))
        }
        add(.post, "/admin/rekey", access: .admin, audit: .none) { context in
            _ = try context.vaultRequest()
            return .json(StatusAnswer.count(.rewrapped, try vault.rekey()))
        }
        add(.get, "/admin/backup", access: .admin, audit: .none) { context in
            _ = try context.vaultRequest()
            let file = try vault.backupFile()
            return HTTPResponse(
                status: 200,
                headers: [
                    ("Content-Type", "application/octet-stream"),
                    ("Content-Disposition", "attachment; filename=\"keychaind.backup\""),
                    ("Cache-Control", "no-store"),
                ],
                file: file)
        }
        add(.get, "/admin/vault", access: .admin, audit: .none) { context in
            _ = try context.vaultRequest()
            return .json(StatusAnswer.vault(vault.status))
        }
    }
}

extension RequestContext {
    /// The vault routes' arguments: the query string, then the body only when there is one.
    func vaultRequest(allowingReencrypt: Bool = false) throws -> VaultRequest {
        try VaultRequest(
            decoding: request.queryItems, body: { request.body.isEmpty ? nil : try jsonBody() },
            allowingReencrypt: allowingReencrypt)
    }
}
