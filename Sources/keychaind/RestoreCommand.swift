import ArgumentParser
import Foundation
import KeychainConfig
import KeychainStore
import Logging

struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Install a backup (GET /v1/admin/backup or a scheduled backup) as a data directory's database.",
        discussion: """
            The backup is checked first (SQLite integrity_check, keychaind schema version, a keyring). \
            Refused while a server runs on the directory; refused without --force when the directory \
            already has a database (with --force it is kept as keychain.db.replaced-<time>) or when its \
            master.key does not open the backup's keyring. A backup holds no master key: the restored \
            vault opens only with the master key the backup was made under (before any later rekey).
            """)

    @Option(name: .customLong("from"), help: "The backup file.")
    var from: String

    @Option(name: .customLong("data-dir"), help: "Data directory to restore into (default ./data).")
    var dataDir: String?

    @Option(name: .long, help: "Config file, for its dataDir and logLevel.")
    var config: String?

    @Flag(name: .long, help: "Replace an existing database (kept beside it), or install despite a master.key that does not match.")
    var force = false

    func run() throws {
        let configuration = try loadConfiguration(file: config, flags: dataDir.map { ["dataDir": $0] } ?? [:])
        let logger = ServerLog.bootstrap(level: configuration.logLevel)
        defer { ServerLog.flush() }
        let directory = DataDirectory(path: configuration.dataDir)
        let report: RestoreReport
        do {
            report = try directory.restore(from: from, force: force, logger: logger)
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
        case .missing:
            lines.append(
                "no master key in \(directory.path): copy the master.key this backup was made under to "
                    + "\(directory.masterKeyPath) (mode 0600) before `keychaind serve`")
        case .mismatch:
            lines.append(
                "warning: \(directory.masterKeyPath) does NOT open the restored keyring; put the matching master.key in place")
        }
        print(lines.joined(separator: "\n"))
    }
}
