#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import KeychainCore
import Logging
import KeychainStore

/// What an upgrade leaves an operator to fall back on (docs/operations.md, "Upgrade and roll
/// back"): on SQLite, the database as it was before this release migrated it; on PostgreSQL, a
/// clear refusal of a database a later release migrated (the operator's `pg_dump` is the copy).
extension DataDirectory {
    /// Copies the database, still at schema `version`, to `keychain.db.pre-migration-v<version>-<UTC
    /// time>` beside it (`-2`, `-3`, ... when taken) before the migrations change it: rolling back
    /// to the release that made it is putting this file back. The name is created with O_EXCL
    /// (0600) and filled by SQLite's backup API after a checkpoint: one file, no WAL beside it.
    func keepPreMigrationCopy(of connection: SQLiteConnection, version: Int64, logger: Logger) throws {
        connection.checkpointQuietly()
        let copy = try Self.claimFreeName("\(databasePath).pre-migration-v\(version)-\(Self.timestamp())") { name in
            // A journal left under the name would be replayed onto the copy when it is opened.
            guard !["-wal", "-journal"].contains(where: { FileManager.default.fileExists(atPath: name + $0) }) else {
                return false
            }
            let descriptor = Glibc.open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                if errno == EEXIST { return false }
                throw DataDirectoryError(.io, "cannot create \(name): \(String(cString: strerror(errno)))")
            }
            Glibc.close(descriptor)
            return true
        }
        do {
            try connection.backup(into: copy)
            try AtomicFile.fsyncFile(copy)
        } catch {
            unlink(copy)
            throw DataDirectoryError(
                .io,
                "cannot keep a copy of \(databasePath) before migrating it (\(StoreErrors.keychainError(for: error))); "
                    + "nothing was migrated")
        }
        AtomicFile.fsyncDirectory(path)
        logger.notice(
            "kept a copy of the database before migrating it", metadata: [
                "copy": "\(copy)", "schemaVersion": "\(version)", "migratingTo": "\(Migrations.latestVersion)",
            ])
    }
}
