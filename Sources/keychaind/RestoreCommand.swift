import ArgumentParser
import Foundation
import KeychainConfig
import KeychainStore
import KeychainSQLite
import Logging

struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Install a sealed backup (GET /v1/admin/backup or a scheduled backup) as a data directory's database.",
        discussion: """
            A backup is sealed under a key derived from the master key it was made under, so restoring \
            needs that master key: the directory's master.key, or --master-key FILE (after a rekey, the \
            master key of the backup's time). The whole backup is authenticated, and the database in it \
            checked (no schema object keychaind does not create, integrity_check, schema version, keyring), \
            before anything is installed: a changed, truncated or foreign backup is refused and nothing is \
            written. Refused while a server runs on the directory; refused without --force when the \
            directory already has a database (with --force it is kept as keychain.db.replaced-<time>, or \
            -2, -3, ... after it when that name is taken; the name is printed) or a \
            master.key other than --master-key. A --master-key is copied to master.key when there is none.
            """)

    @Option(name: .customLong("from"), help: "The backup file.")
    var from: String

    @Option(name: .customLong("master-key"), help: "The master key file the backup was made under (default: the directory's master.key).")
    var masterKey: String?

    @Option(name: .customLong("data-dir"), help: "Data directory to restore into (default ./data).")
    var dataDir: String?

    @Option(name: .long, help: "Config file, for its dataDir and logLevel.")
    var config: String?

    @Flag(name: .long, help: "Replace an existing database (kept beside it), or install despite a master.key other than --master-key.")
    var force = false

    func run() throws {
        let configuration = try loadConfiguration(file: config, flags: dataDir.map { ["dataDir": $0] } ?? [:])
        let logger = ServerLog.bootstrap(level: configuration.logLevel)
        defer { ServerLog.flush() }
        let directory = DataDirectory(path: configuration.dataDir)
        let report: RestoreReport
        do {
            report = try directory.restore(from: from, masterKeyFile: masterKey, force: force, logger: logger)
        } catch {
            throw Failure(error)
        }
        var lines = [
            "restored \(from) into \(directory.databasePath): \(report.items) items, \(report.clients) clients, "
                + "\(report.terms) keyring terms, schema version \(report.schemaVersion)"
        ]
        if let replaced = report.replacedDatabasePath { lines.append("the previous database is kept as \(replaced)") }
        switch report.masterKey {
        case .matches: lines.append("\(directory.masterKeyPath) opens the restored keyring")
        case .installed: lines.append("installed \(masterKey ?? "the master key") as \(directory.masterKeyPath)")
        case .mismatch:
            lines.append(
                "warning: \(directory.masterKeyPath) does NOT open the restored keyring; put the matching master.key in place")
        }
        print(lines.joined(separator: "\n"))
    }
}
