#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
public import KeychainCore
public import Logging
public import KeychainStore

/// The data directory's SQLite database (`keychain.db`): initialising it and opening the vault on it.
extension DataDirectory {
    /// True when the database file exists.
    public var isInitialized: Bool { FileManager.default.fileExists(atPath: databasePath) }

    /// Creates the directory if missing (0700), master.key (0600, 32 random bytes, atomic), the
    /// database (schema, keyring with term 1, key check value), the first admin client (name
    /// "admin", accessGroups ["admin"], role .admin) and admin.token (0600, the token + "\n",
    /// atomic). Throws `DataDirectoryError` (`.alreadyInitialized` when the database or
    /// master.key already exists). On failure, the files it created are removed.
    public func initialize(logger: Logger) throws {
        try initialize(logger: logger, rotationThreshold: Keyring.defaultRotationThreshold)
    }

    func initialize(logger: Logger, rotationThreshold: UInt64) throws {
        try createIfMissing()
        let fileManager = FileManager.default
        if fileManager.fileExists(atPath: databasePath) || fileManager.fileExists(atPath: masterKeyPath) {
            throw DataDirectoryError(
                .alreadyInitialized,
                "the data directory \(path) is already initialized (\(databasePath) or \(masterKeyPath) exists); "
                    + "use it with `keychaind serve`, or choose an empty directory")
        }
        do {
            let masterKey = try MasterKeyFile.generate()
            try MasterKeyFile.write(masterKey, to: masterKeyPath)
            try createPrivateDatabaseFile()
            let pool = try openPool(logger: logger)
            defer { pool.close() }
            _ = try Keyring.create(
                storage: KeyringTable(pool: pool), masterKey: masterKey, source: masterKeySource, threshold: rotationThreshold, logger: logger)
            let issuer = OpenSSLClientTokenIssuer()
            let (token, new) = issuer.issue(for: .client("admin"), lifetime: nil, now: Date())
            try SQLiteClientStore(pool: pool).addClient(
                Client(name: "admin", accessGroups: ["admin"], role: .admin, createdAt: new.record.issuedAt), token: new)
            try writeAdminToken(token)
            logger.info("data directory initialized", metadata: ["path": "\(path)"])
        } catch {
            for file in [masterKeyPath, databasePath, databasePath + "-wal", databasePath + "-shm", adminTokenPath] {
                unlink(file)
            }
            if let error = error as? DataDirectoryError { throw error }
            throw DataDirectoryError(.io, "cannot initialize \(path): \(StoreErrors.keychainError(for: error))")
        }
    }

    /// Checks that `path` is a directory and master.key is not group/other accessible, reads the
    /// master key, opens the database (applying migrations), unlocks the keyring, and returns the
    /// open vault. Every failure is a `DataDirectoryError` that names the path and the fix.
    ///
    /// With `locked`, the master key is not read (it may even be absent): the vault starts
    /// locked and `unlock()` loads the key later.
    /// `readers`: reading connections kept open between reads, one for each thread that reads at once.
    public func open(logger: Logger, readers: Int = 4, locked: Bool = false, quota: GroupQuota = .unlimited) throws -> Vault {
        try open(
            logger: logger, rotationThreshold: Keyring.defaultRotationThreshold, maxIdleReaders: readers, locked: locked,
            quota: quota)
    }

    func open(
        logger: Logger, rotationThreshold: UInt64, maxIdleReaders: Int = 4, locked: Bool = false,
        quota: GroupQuota = .unlimited
    ) throws -> Vault {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw DataDirectoryError(
                .notInitialized, "the data directory \(path) does not exist; create it with `keychaind init`")
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw DataDirectoryError.notADirectory(path) }
        guard FileManager.default.fileExists(atPath: databasePath) else {
            if FileManager.default.fileExists(atPath: masterKeyPath) {
                throw DataDirectoryError(
                    .damaged,
                    "the database \(databasePath) is missing but \(masterKeyPath) exists; restore the database from "
                        + "your backup (or move master.key away and run `keychaind init` for a new, empty vault)")
            }
            throw DataDirectoryError(
                .notInitialized, "the data directory \(path) is not initialized; run `keychaind init` first")
        }
        if locked {
            let pool = try openPool(maxIdleReaders: maxIdleReaders, logger: logger)
            do {
                let keyring = try Keyring.locked(
                storage: KeyringTable(pool: pool), source: masterKeySource, threshold: rotationThreshold, logger: logger)
                return try Vault(pool: pool, keyring: keyring, directory: self, logger: logger, quota: quota)
            } catch {
                pool.close()
                throw damaged(error)
            }
        }
        guard FileManager.default.fileExists(atPath: masterKeyPath) else {
            throw DataDirectoryError(
                .missingMasterKey,
                "the master key \(masterKeyPath) is missing but the database \(databasePath) exists; "
                    + "restore master.key from your backup (without it the secrets cannot be decrypted)")
        }
        let candidateKey = try MasterKeyFile.read(from: masterKeyPath)
        let pool = try openPool(maxIdleReaders: maxIdleReaders, logger: logger)
        do {
            let masterKey = try resolveMasterKey(candidateKey, storage: KeyringTable(pool: pool), logger: logger)
            let keyring = try Keyring.unlock(
                storage: KeyringTable(pool: pool), masterKey: masterKey, source: masterKeySource, threshold: rotationThreshold, logger: logger)
            return try Vault(pool: pool, keyring: keyring, directory: self, logger: logger, quota: quota)
        } catch let error as KeychainError where error.code == .authFailed {
            pool.close()
            throw DataDirectoryError(
                .wrongMasterKey,
                "the master key \(masterKeyPath) does not open the keyring of \(databasePath): it is not this vault's "
                    + "master key; restore the matching master.key from your backup")
        } catch let error as DataDirectoryError {
            pool.close()
            throw error
        } catch {
            pool.close()
            throw damaged(error)
        }
    }

    /// Creates the empty database file with mode 0600 before SQLite opens it: SQLite would create
    /// it under the process's umask (0644 under the common 022), and gives the WAL and
    /// shared-memory files the database file's mode.
    private func createPrivateDatabaseFile() throws {
        let descriptor = Glibc.open(databasePath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw DataDirectoryError(.io, "cannot create \(databasePath): \(String(cString: strerror(errno)))")
        }
        close(descriptor)
    }

    /// Opens the database and applies the migrations it lacks, keeping a copy of it first when
    /// there are some (`keepPreMigrationCopy`). A database a later release migrated is refused
    /// as such (`newerSchema`), not as damaged: it is whole, and that release still opens it.
    private func openPool(maxIdleReaders: Int = 4, logger: Logger) throws -> ConnectionPool {
        do {
            let pool = try ConnectionPool(path: databasePath, maxIdleReaders: maxIdleReaders)
            do {
                try pool.write { connection in
                    let version = try Migrations.version(of: connection)
                    if version > 0 && version < Migrations.latestVersion {
                        try keepPreMigrationCopy(of: connection, version: version, logger: logger)
                    }
                    try Migrations.apply(on: connection)
                }
            } catch {
                pool.close()
                throw error
            }
            return pool
        } catch let error as NewerSchemaError {
            throw DataDirectoryError(
                .newerSchema,
                "the database \(databasePath) was migrated by a later keychaind release: its schema version is "
                    + "\(error.found), this release knows versions up to \(error.known). It is left as it is. Start the "
                    + "release that migrated it, or go back to this one with the database as it was before that "
                    + "upgrade: stop the server and put back the copy keychaind kept beside it before migrating "
                    + "(keychain.db.pre-migration-v<N>-<time>, N at most \(error.known)) or your backup (docs/operations.md, "
                    + "\"Upgrade and roll back\")")
        } catch let error as SQLiteError {
            throw DataDirectoryError(
                .damaged,
                "the database \(databasePath) is damaged or not a keychaind database (\(error.message)); "
                    + "restore it from your backup")
        }
    }
}
