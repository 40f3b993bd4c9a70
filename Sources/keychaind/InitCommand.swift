import ArgumentParser
import Foundation
import KeychainConfig
import KeychainStore
import Logging

struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Initialise a data directory: master key, database, keyring and the first admin token.")

    @Option(name: .customLong("data-dir"), help: "Data directory to initialise (default ./data).")
    var dataDir: String?

    @Option(name: .long, help: "Config file, for its dataDir and logLevel.")
    var config: String?

    func run() throws {
        let configuration = try loadConfiguration(file: config, flags: dataDir.map { ["dataDir": $0] } ?? [:])
        let logger = ServerLog.bootstrap(level: configuration.logLevel)
        defer { ServerLog.flush() }
        let directory = DataDirectory(path: configuration.dataDir)
        do {
            let lock = try directory.acquireLock()
            defer { withExtendedLifetime(lock) {} }
            try directory.initialize(logger: logger)
        } catch {
            throw Failure(error)
        }
        logger.notice(
            "initialised",
            metadata: [
                "database": "\(directory.databasePath)", "masterKey": "\(directory.masterKeyPath)",
                "adminToken": "\(directory.adminTokenPath)",
            ])
    }
}
