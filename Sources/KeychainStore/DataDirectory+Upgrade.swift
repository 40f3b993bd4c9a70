#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import KeychainCore
import Logging

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

    /// Applies the PostgreSQL migrations on `db`; a database a later release migrated is refused
    /// as `newerSchema`, saying what to do, and nothing is written; other failures are the
    /// storage's `KeychainError`.
    func migratePostgreSQL(_ db: PGConnection) throws {
        do {
            try PGMigrations.apply(on: db)
        } catch let error as NewerSchemaError {
            throw DataDirectoryError(
                .newerSchema,
                "the PostgreSQL database was migrated by a later keychaind release: its schema version is "
                    + "\(error.found), this release knows versions up to \(error.known). It is left as it is. Run "
                    + "that release on this node, or, to roll every node back to this one, restore the pg_dump "
                    + "taken before that upgrade (docs/operations.md, \"Upgrade and roll back\")")
        } catch {
            throw StoreErrors.keychainError(for: error)
        }
    }
}
