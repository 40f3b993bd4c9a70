import ArgumentParser
import Foundation
import KeychainConfig
import KeychaindApp
import KeychainStore
import KeychainSQLite
import KeychainPostgreSQL
import Logging

struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Initialise a data directory: master key, database, keyring and the first admin token.")

    @Option(name: .customLong("data-dir"), help: "Data directory to initialise (default ./data).")
    var dataDir: String?

    @Option(name: .long, help: "Config file, for its dataDir, logLevel and storage.")
    var config: String?

    func run() throws {
        let configuration = try loadConfiguration(file: config, flags: dataDir.map { ["dataDir": $0] } ?? [:])
        let logger = ServerLog.bootstrap(level: configuration.logLevel)
        defer { ServerLog.flush() }
        let directory = DataDirectory(path: configuration.dataDir)
        do {
            let lock = try directory.acquireLock()
            defer { withExtendedLifetime(lock) {} }
            switch configuration.storageBackend {
            case .sqlite:
                try directory.initialize(logger: logger)
            case .postgresql:
                try configuration.checkStorage()
                guard try directory.initializePostgreSQL(Wiring.postgresql(configuration), logger: logger) else {
                    throw DataDirectoryError(
                        .alreadyInitialized,
                        "the PostgreSQL database holds a vault already; join it with `keychaind serve` and a copy of its master.key")
                }
            }
        } catch {
            throw Failure(error)
        }
        logger.notice(
            "initialised",
            metadata: [
                "database": "\(configuration.storageBackend == .sqlite ? directory.databasePath : "PostgreSQL")",
                "masterKey": "\(directory.masterKeyPath)", "adminToken": "\(directory.adminTokenPath)",
            ])
    }
}
