#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import KeychainCore
public import Logging

/// An exclusive `flock` on `<data-dir>/keychaind.lock`, held by `keychaind serve` (and by
/// `restore` while it works) for as long as the object lives. The kernel releases it when the
/// process dies, however it dies.
public final class DataDirectoryLock: Sendable {
    private let descriptor: Int32
    public let path: String

    fileprivate init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { Glibc.close(descriptor) }
}

/// What `restore` installed.
public struct RestoreReport: Sendable, Equatable {
    public enum MasterKeyState: Sendable, Equatable {
        /// `master.key` (or `master.key.new`) in the directory opens the restored keyring.
        case matches
        /// There is no `master.key`: put the one the backup was made under in place before `serve`.
        case missing
        /// `master.key` does not open the restored keyring (installed anyway with `--force`).
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
    /// Takes the directory's lock (creating the directory, 0700, when missing). `inUse` when
    /// another process holds it: a second server on one directory, or a restore under a server.
    public func acquireLock() throws -> DataDirectoryLock {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw DataDirectoryError.notADirectory(path) }
        } else {
            do {
                try FileManager.default.createDirectory(
                    atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw DataDirectoryError(.io, "cannot create the data directory \(path): \(error.localizedDescription)")
            }
        }
        let fd = Glibc.open(lockFilePath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw DataDirectoryError(.io, "cannot open \(lockFilePath): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            Glibc.close(fd)
            if reason == EWOULDBLOCK {
                throw DataDirectoryError(
                    .inUse,
                    "the data directory \(path) is in use: another keychaind process holds \(lockFilePath); "
                        + "stop that server first")
            }
            throw DataDirectoryError(.io, "cannot lock \(lockFilePath): \(String(cString: strerror(reason)))")
        }
        return DataDirectoryLock(descriptor: fd, path: lockFilePath)
    }

    /// Installs the database backup `file` as this directory's database.
    ///
    /// Checks first, on a private copy inside the directory: it is a SQLite database that passes
    /// `PRAGMA integrity_check`, with a keychaind schema version this build knows and a keyring.
    /// Refuses (`inUse`) while a server holds the directory's lock, even with `force`. Without
    /// `force`, refuses a directory that already has a database (`alreadyInitialized`) and a
    /// `master.key` that does not open the backup's keyring (`wrongMasterKey`). With `force`, the
    /// database it replaces is kept beside it as `keychain.db.replaced-<UTC time>`.
    /// The copy is renamed into place (atomic), the directory fsynced.
    public func restore(from file: String, force: Bool, logger: Logger) throws -> RestoreReport {
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
        let temporary = "\(path)/.restore-\(UUID().uuidString).db"
        defer { unlink(temporary) }
        do {
            try FileManager.default.copyItem(atPath: file, toPath: temporary)
            chmod(temporary, 0o600)
        } catch {
            throw DataDirectoryError(.io, "cannot copy \(file) into \(path): \(error.localizedDescription)")
        }
        let (inspected, checkValue) = try Self.inspectBackup(temporary, shownAs: file)
        var report = inspected
        try AtomicFile.fsyncFile(temporary)

        report.masterKey = masterKeyState(for: checkValue)
        if report.masterKey == .mismatch && !force {
            throw DataDirectoryError(
                .wrongMasterKey,
                "\(masterKeyPath) does not open the keyring of the backup \(file): the backup was made under "
                    + "another master key (a backup taken before a rekey needs the master key of that time). "
                    + "Put the matching master.key in place, or pass --force to install the database anyway")
        }

        if databaseExists {
            let aside = "\(databasePath).replaced-\(Self.timestamp())"
            checkpointQuietly(databasePath)
            if FileManager.default.fileExists(atPath: databasePath + "-wal") {
                try AtomicFile.renameDurably(databasePath + "-wal", to: aside + "-wal")
            }
            unlink(databasePath + "-shm")
            try AtomicFile.renameDurably(databasePath, to: aside)
            report.replacedDatabasePath = aside
        } else {
            // An orphan WAL would be replayed onto the restored database: never leave one.
            for suffix in ["-wal", "-shm"] { unlink(databasePath + suffix) }
        }
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
            let integrity = try connection.integrityCheck()
            guard integrity == ["ok"] else {
                throw bad("PRAGMA integrity_check reports \(integrity.prefix(3).joined(separator: "; "))")
            }
            let version = try Migrations.version(of: connection)
            guard version >= 1 else { throw bad("it has no keychaind schema (user_version 0)") }
            guard version <= Migrations.latestVersion else {
                throw bad("its schema version \(version) is newer than this keychaind (\(Migrations.latestVersion))")
            }
            let tables = try connection.tableNames()
            for table in ["items", "keyring", "keyring_check", "clients"] where !tables.contains(table) {
                throw bad("the table \(table) is missing")
            }
            guard let check = try KeyringTable.checkValue(on: connection) else { throw bad("its keyring has no key check value") }
            let terms = try KeyringTable.termCount(on: connection)
            guard terms > 0 else { throw bad("its keyring holds no data key") }
            let items = try ItemTable.count(on: connection)
            let clients = try ClientTable.count(on: connection)
            let report = RestoreReport(
                schemaVersion: version, items: items, clients: clients, terms: terms, masterKey: .missing,
                replacedDatabasePath: nil)
            return (report, check)
        } catch let error as SQLiteError {
            throw bad("SQLite: \(error.message)")
        }
    }

    private func masterKeyState(for checkValue: [UInt8]) -> RestoreReport.MasterKeyState {
        var sawKey = false
        for candidate in [masterKeyPath, pendingMasterKeyPath] where FileManager.default.fileExists(atPath: candidate) {
            sawKey = true
            if let key = try? MasterKeyFile.read(from: candidate),
                constantTimeEqual(Keyring.checkValue(key), checkValue)
            {
                return .matches
            }
        }
        return sawKey ? .mismatch : .missing
    }

    /// Folds the WAL of a database about to be moved aside into it, so the kept copy is whole.
    private func checkpointQuietly(_ database: String) {
        guard let connection = try? SQLiteConnection(path: database) else { return }
        connection.checkpointQuietly()
        connection.close()
    }

    static func timestamp(_ date: Date = Date()) -> String {
        var time = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(
            format: "%04d%02d%02dT%02d%02d%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }
}
