import ArgumentParser
import Foundation
import KeychainConfig
import KeychainCore
import KeychaindApp
import KeychainStore
import KeychainSQLite
import KeychainObservability
import KeychainHTTP
import Logging

/// `keychaind admin-token`: the way back in when no admin token is left (lost, or expired): a new
/// admin client whose token never expires, written to `admin.token` and audited. It reads
/// `master.key` (opening the vault proves the operator holds it) and takes the data directory's
/// lock, so on SQLite the server must be stopped.
struct AdminTokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin-token",
        abstract: "Mint a recovery admin token (a new admin client) into admin.token; the server stopped, on SQLite.")

    @Option(name: .customLong("data-dir"), help: "Data directory (default ./data).")
    var dataDir: String?

    @Option(name: .long, help: "Config file, for its dataDir, logLevel, storage and audit.")
    var config: String?

    func run() throws {
        let configuration = try loadConfiguration(file: config, flags: dataDir.map { ["dataDir": $0] } ?? [:])
        let logger = ServerLog.bootstrap(level: configuration.logLevel)
        defer { ServerLog.flush() }
        let directory = DataDirectory(path: configuration.dataDir)
        do {
            if configuration.storageBackend == .sqlite, !directory.isInitialized {
                throw DataDirectoryError(.notInitialized, "\(directory.path) holds no vault; `keychaind init` makes one")
            }
            let lock = try directory.acquireLock()
            defer { withExtendedLifetime(lock) {} }
            let vault = try KeychaindApp.openVault(
                directory, configuration: configuration, scheduledBackups: false, logger: logger
            ).vault
            defer { vault.close() }
            let now = Date()
            let name = "recovery-\(DataDirectory.timestamp(now))"
            let (token, new) = vault.tokenIssuer.issue(for: .client(name), lifetime: nil, now: now)
            try vault.clients.addClient(
                Client(name: name, accessGroups: ["admin"], role: .admin, createdAt: new.record.issuedAt), token: new)
            try directory.writeAdminToken(token)
            let observe = try Observe.make(configuration, vault: vault, logger: logger)
            observe.auditor?.recordRecoveryToken(client: name, token: new.record)
            observe.auditLog?.close()
            logger.notice(
                "recovery admin token written",
                metadata: ["client": "\(name)", "accessor": "\(new.record.accessor)", "adminToken": "\(directory.adminTokenPath)"])
        } catch {
            throw Failure(error)
        }
    }
}
