#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import KeychainCore
public import Logging
public import KeychainStore

/// What `restore` installed.
public struct RestoreReport: Sendable, Equatable {
    public enum MasterKeyState: Sendable, Equatable {
        /// `master.key` (or `master.key.new`) in the directory opened the backup and opens the
        /// restored keyring.
        case matches
        /// The directory had no `master.key`: the one given with the backup was installed there.
        case installed
        /// The directory's `master.key` is not the key given with the backup (installed anyway
        /// with `force`): put the matching master.key in place before `serve`.
        case mismatch
    }

    public var schemaVersion: Int64
    public var items: Int
    public var clients: Int
    public var terms: Int
    public var masterKey: MasterKeyState
    /// Where the database that was replaced was moved, nil when there was none.
    public var replacedDatabasePath: String?
}

extension DataDirectory {
    /// Installs the sealed backup `file` (`SealedBackup`) as this directory's database.
    ///
    /// The backup is opened with the master key it was made under: `masterKeyFile` when given,
    /// else this directory's `master.key` (or `master.key.new`). Every chunk is authenticated
    /// while it is decrypted into a private file inside the directory, and the result is checked
    /// (`inspectBackup`: no schema object keychaind does not create, `integrity_check`, a schema
    /// version this build knows, a keyring made under that master key) before anything is
    /// installed: a changed, truncated, extended or foreign backup is refused (`badBackup`,
    /// `wrongMasterKey` when no key opens it) and the directory is left as it was.
    /// Refuses (`inUse`) while a server holds the directory's lock, even with `force`. Without
    /// `force`, refuses a directory that already has a database (`alreadyInitialized`) and a
    /// `master.key` other than `masterKeyFile` (`wrongMasterKey`). A `masterKeyFile` is copied to
    /// `master.key` when the directory has none. With `force`, the database it replaces is kept
    /// beside it as `keychain.db.replaced-<UTC time>` (`-2`, `-3`, ... after it when a restore in
    /// the same second kept one already). The copy is renamed into place (atomic), the directory
    /// fsynced.
    public func restore(from file: String, masterKeyFile: String? = nil, force: Bool, logger: Logger) throws
        -> RestoreReport
    {
        let lock = try acquireLock()
        defer { withExtendedLifetime(lock) {} }
        guard FileManager.default.fileExists(atPath: file) else {
            throw DataDirectoryError(.badBackup, "the backup \(file) does not exist")
        }
        let databaseExists = FileManager.default.fileExists(atPath: databasePath)
        if databaseExists && !force {
            throw DataDirectoryError(
                .alreadyInitialized,
                "\(databasePath) exists; restoring would replace it. Pass --force to replace it "
                    + "(the current database is kept beside it as keychain.db.replaced-<time>)")
        }
        let candidates = try masterKeyCandidates(given: masterKeyFile)
        let temporary = "\(path)/.restore-\(UUID().uuidString).db"
        defer { unlink(temporary) }
        let opened: Int
        do {
            opened = try SealedBackup.open(
                from: file, to: temporary, keys: candidates.map { SealedBackup.backupKey(masterKey: $0.key) })
        } catch .foreignKey {
            throw DataDirectoryError(
                .wrongMasterKey,
                "\(file) is refused: \(SealedBackupError.foreignKey.description) "
                    + "(tried \(candidates.map(\.path).joined(separator: ", "))); nothing was written")
        } catch {
            throw DataDirectoryError(.badBackup, "\(file) is refused: \(error.description); nothing was written")
        }
        let (inspected, checkValue) = try Self.inspectBackup(temporary, shownAs: file)
        let masterKey = candidates[opened]
        guard constantTimeEqual(checkValue, Keyring.checkValue(masterKey.key)) else {
            throw DataDirectoryError(
                .badBackup, "\(file) is refused: its keyring was not made under the master key that sealed it")
        }
        var report = inspected
        report.masterKey = try masterKeyState(for: masterKey, force: force, backup: file)
        try Self.dropLoginTokens(temporary, schemaVersion: report.schemaVersion)
        try AtomicFile.fsyncFile(temporary)
        if report.masterKey == .installed { try MasterKeyFile.write(masterKey.key, to: masterKeyPath) }

        if databaseExists {
            checkpointQuietly(databasePath)
            report.replacedDatabasePath = try keepReplacedDatabase()
        }
        // An orphan WAL would be replayed onto the restored database: never leave one (a replaced
        // database's WAL lives on under its kept name). Until the rename below keychain.db is the
        // replaced database, after it the restored one: a crash leaves one of them in place.
        for suffix in ["-wal", "-shm"] { unlink(databasePath + suffix) }
        AtomicFile.fsyncDirectory(path)
        try AtomicFile.renameDurably(temporary, to: databasePath)
        logger.notice(
            "restored", metadata: [
                "from": "\(file)", "database": "\(databasePath)", "items": "\(report.items)",
                "replaced": "\(report.replacedDatabasePath ?? "-")",
            ])
        return report
    }

    /// Opens the copy at `path` (converting it to a rollback journal, so it stays one file) and
    /// checks it; returns the counts and the key check value. `badBackup` names `shownAs`.
    static func inspectBackup(_ path: String, shownAs: String) throws -> (RestoreReport, [UInt8]) {
        func bad(_ why: String) -> DataDirectoryError {
            DataDirectoryError(.badBackup, "\(shownAs) is not a usable keychaind backup: \(why)")
        }
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path, wal: false)
        } catch let error as SQLiteError {
            throw bad("not a SQLite database (\(error.message))")
        }
        defer { connection.close() }
        do {
            // Before anything reads the schema's SQL: no function of an untrusted schema runs.
            try connection.execute("PRAGMA trusted_schema=OFF")
            let version = try Migrations.version(of: connection)
            guard version >= 1 else { throw bad("it has no keychaind schema (user_version 0)") }
            guard version <= Migrations.latestVersion else {
                throw bad("its schema version \(version) is newer than this keychaind (\(Migrations.latestVersion))")
            }
            // Exactly the tables and indexes keychaind's migrations make: a trigger, a view, an
            // index or a table changed or added by someone else would run or hide code.
            let found = try connection.schemaObjects()
            let expected = try Migrations.schemaObjects(atVersion: version)
            if let extra = found.subtracting(expected).sorted().first {
                throw bad("it holds a schema object keychaind does not create: \(extra)")
            }
            if let missing = expected.subtracting(found).sorted().first {
                throw bad("the schema object \(missing) is missing")
            }
            let integrity = try connection.integrityCheck()
            guard integrity == ["ok"] else {
                throw bad("PRAGMA integrity_check reports \(integrity.prefix(3).joined(separator: "; "))")
            }
            guard let check = try KeyringTable.checkValue(on: connection) else { throw bad("its keyring has no key check value") }
            let terms = try KeyringTable.termCount(on: connection)
            guard terms > 0 else { throw bad("its keyring holds no data key") }
            let items = try ItemTable.count(on: connection)
            let clients = try ClientTable.count(on: connection)
            let report = RestoreReport(
                schemaVersion: version, items: items, clients: clients, terms: terms, masterKey: .matches,
                replacedDatabasePath: nil)
            return (report, check)
        } catch let error as SQLiteError {
            throw bad("SQLite: \(error.message)")
        }
    }

    /// Forgets every token a login issued in the restored copy: a revoked one would come back
    /// with the backup, and workloads log in again anyway. (Older schemas had none.)
    static func dropLoginTokens(_ path: String, schemaVersion: Int64) throws {
        guard schemaVersion >= 5 else { return }
        let connection = try SQLiteConnection(path: path, wal: false)
        defer { connection.close() }
        _ = try TokenTable.revokeAllLoginTokens(on: connection)
    }

    /// The keys a backup may be sealed under, each with the file it was read from: `given`
    /// alone, or the directory's key files. `missingMasterKey` when there is none.
    private func masterKeyCandidates(given: String?) throws -> [(path: String, key: SecretBytes)] {
        if let given { return [(given, try MasterKeyFile.read(from: given))] }
        let candidates = try [masterKeyPath, pendingMasterKeyPath].filter { FileManager.default.fileExists(atPath: $0) }
            .map { (path: $0, key: try MasterKeyFile.read(from: $0)) }
        guard !candidates.isEmpty else {
            throw DataDirectoryError(
                .missingMasterKey,
                "restoring needs the master key the backup was made under, to verify it: put it at \(masterKeyPath) "
                    + "(mode 0600) or pass --master-key FILE")
        }
        return candidates
    }

    /// How the key that opened the backup relates to the directory's `master.key`.
    private func masterKeyState(for used: (path: String, key: SecretBytes), force: Bool, backup: String) throws
        -> RestoreReport.MasterKeyState
    {
        if used.path == masterKeyPath || used.path == pendingMasterKeyPath { return .matches }
        guard FileManager.default.fileExists(atPath: masterKeyPath) else { return .installed }
        if let current = try? MasterKeyFile.read(from: masterKeyPath), current == used.key { return .matches }
        guard force else {
            throw DataDirectoryError(
                .wrongMasterKey,
                "\(masterKeyPath) is not the master key \(used.path) that opens the backup \(backup); move it away "
                    + "(restore then installs \(used.path) as master.key), or pass --force to install the database anyway")
        }
        return .mismatch
    }

    /// Gives the database about to be replaced (and its WAL, when there is one) a name of its own
    /// beside it: `keychain.db.replaced-<UTC time>`, or `-2`, `-3`, ... after it when that name
    /// (or its `-wal`) is taken, so a restore never overwrites a copy kept by an earlier one (two
    /// in one second used to). Hard links, which fail on an existing name rather than replace it,
    /// made durable before the caller removes the live names: keychain.db is never missing.
    /// Returns the kept name.
    private func keepReplacedDatabase() throws -> String {
        let wal = databasePath + "-wal"
        let hasWAL = FileManager.default.fileExists(atPath: wal)
        let kept = try Self.claimFreeName("\(databasePath).replaced-\(Self.timestamp())") { kept in
            guard try linkExclusively(databasePath, as: kept) else { return false }
            // A stale WAL under the kept name would be replayed onto the kept copy when opened.
            let keptWALIsOurs =
                hasWAL ? try linkExclusively(wal, as: kept + "-wal") : !FileManager.default.fileExists(atPath: kept + "-wal")
            if !keptWALIsOurs { unlink(kept) }
            return keptWALIsOurs
        }
        AtomicFile.fsyncDirectory(path)
        return kept
    }

    /// The first of `base`, `base-2`, `base-3`, ... that `claim` takes. `claim` creates the name
    /// exclusively (link(2), O_EXCL) and answers false when it is taken, so a copy kept under an
    /// earlier name is never replaced.
    static func claimFreeName(_ base: String, _ claim: (String) throws -> Bool) rethrows -> String {
        var attempt = 1
        while true {
            let name = attempt == 1 ? base : "\(base)-\(attempt)"
            attempt += 1
            if try claim(name) { return name }
        }
    }

    /// Links `existing` as `name`: false when `name` exists (EEXIST), which is never replaced.
    private func linkExclusively(_ existing: String, as name: String) throws -> Bool {
        if Glibc.link(existing, name) == 0 { return true }
        let reason = errno
        guard reason == EEXIST else {
            throw DataDirectoryError(.io, "cannot keep \(existing) as \(name): \(String(cString: strerror(reason)))")
        }
        return false
    }

    /// Folds the WAL of a database about to be replaced into it, so the kept copy is whole.
    private func checkpointQuietly(_ database: String) {
        guard let connection = try? SQLiteConnection(path: database) else { return }
        connection.checkpointQuietly()
        connection.close()
    }
}
