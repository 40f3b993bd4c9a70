import Foundation
public import KeychainCore
public import KeychainStore
public import Logging

/// A data directory whose vault lives in PostgreSQL: the directory holds this node's copy of
/// `master.key` (and, on the node that initialised the database, `admin.token`); the database
/// holds everything else. Every node reads the same master key.
extension DataDirectory {
    /// Applies the schema's migrations and initialises an empty database (as `initialize` does a
    /// directory): the keyring under this directory's `master.key` (written first when absent),
    /// and the first admin client, whose token goes to `admin.token`; all in one transaction
    /// under an advisory lock, so that of nodes starting at once one initialises and the others
    /// join. Returns false, doing nothing, when the database is initialised already.
    @discardableResult
    public func initializePostgreSQL(_ settings: PGSettings, logger: Logger) throws -> Bool {
        try createIfMissing()
        let db = try StoreErrors.map { try settings.connect() }
        try migratePostgreSQL(db)
        return try StoreErrors.map {
            try db.transaction {
                try db.execute("SELECT pg_advisory_xact_lock(hashtext($1))", [.text(Self.initLockName)])
                guard try PGKeyringTable.load(on: db).checkValue == nil else { return false }
                let wroteKey = !FileManager.default.fileExists(atPath: masterKeyPath)
                if wroteKey { try MasterKeyFile.write(try MasterKeyFile.generate(), to: masterKeyPath) }
                do {
                    let first = try Keyring.firstTerm(masterKey: try MasterKeyFile.read(from: masterKeyPath))
                    _ = try PGKeyringTable.create(checkValue: first.checkValue, firstWrappedKey: first.wrappedKey, on: db)
                    let (token, new) = OpenSSLClientTokenIssuer().issue(for: .client("admin"), lifetime: nil, now: Date())
                    try PGClientTable.insertRow(
                        Client(name: "admin", accessGroups: ["admin"], role: .admin, createdAt: new.record.issuedAt),
                        token: new, on: db)
                    try writeAdminToken(token)
                } catch {
                    if wroteKey { unlink(masterKeyPath) }
                    throw error
                }
                logger.info("PostgreSQL database initialized", metadata: ["dataDir": "\(path)"])
                return true
            }
        }
    }

    static let initLockName = "keychaind:init"

    /// Opens the vault of an initialised PostgreSQL database with this directory's master key,
    /// locked when the cluster is locked (or `locked` asks it). `notInitialized` when the database
    /// has no keyring yet, `missingMasterKey` when this node has no copy of `master.key`,
    /// `wrongMasterKey` when its copy is not the database's. The node records itself in
    /// `cluster_nodes` as running `release` (`PGHeartbeat`) before it serves.
    public func openPostgreSQL(
        _ settings: PGSettings, release: String, logger: Logger, locked: Bool = false, quota: GroupQuota = .unlimited
    ) throws -> Vault {
        try openPostgreSQL(
            settings, release: release, logger: logger, locked: locked, quota: quota,
            rotationThreshold: Keyring.defaultRotationThreshold)
    }

    func openPostgreSQL(
        _ settings: PGSettings, release: String, logger: Logger, locked: Bool, quota: GroupQuota, rotationThreshold: UInt64,
        leaseSize: UInt64 = 10_000
    ) throws -> Vault {
        let storage = PGKeyringStorage(settings: settings, leaseSize: leaseSize)
        let state: PGClusterState.Snapshot
        let heartbeat = PGHeartbeat(
            node: PGClusterNodes.nodeName(dataDirectory: path), release: release, statistics: settings.statistics,
            logger: logger)
        do {
            let db = try settings.connect()
            try migratePostgreSQL(db)
            guard try PGKeyringTable.load(on: db).checkValue != nil else {
                throw DataDirectoryError(
                    .notInitialized, "the PostgreSQL database has no vault yet; run `keychaind init` (or serve) with it first")
            }
            state = try PGClusterState.read(on: db)
            try heartbeat.beat(on: db, starting: true)
            let cluster = settings.statistics.current
            logger.notice(
                "this node is recorded in cluster_nodes", metadata: [
                    "node": "\(heartbeat.node)", "release": "\(release)", "schemaVersion": "\(PGMigrations.latestVersion)",
                    "liveNodes": "\(cluster.liveNodes)", "oldestLiveRelease": "\(cluster.oldestLiveRelease ?? "-")",
                ])
        } catch let error as DataDirectoryError {
            throw error
        } catch {
            throw DataDirectoryError(.io, "cannot open the PostgreSQL database: \(StoreErrors.keychainError(for: error))")
        }
        let keyring: Keyring
        if locked || state.locked {
            keyring = try StoreErrors.map {
                try Keyring.locked(storage: storage, source: masterKeySource, threshold: rotationThreshold, logger: logger)
            }
            if state.locked { logger.notice("the cluster is locked: this node starts locked") }
        } else {
            guard FileManager.default.fileExists(atPath: masterKeyPath) else {
                throw DataDirectoryError(
                    .missingMasterKey,
                    "\(masterKeyPath) is missing: a node joining a PostgreSQL vault needs a copy of the master.key "
                        + "written by the node that initialised it (mode 0600)")
            }
            do {
                let masterKey = try resolveMasterKey(MasterKeyFile.read(from: masterKeyPath), storage: storage, logger: logger)
                keyring = try Keyring.unlock(
                    storage: storage, masterKey: masterKey, source: masterKeySource, threshold: rotationThreshold,
                    logger: logger)
            } catch let error as KeychainError where error.code == .authFailed {
                throw DataDirectoryError(
                    .wrongMasterKey,
                    "the master key \(masterKeyPath) does not open the PostgreSQL vault's keyring: copy the master.key "
                        + "of a node of this vault")
            }
        }
        let backend = PGBackend(
            settings: settings, keyring: keyring, keyringStorage: storage, directory: self, state: state, heartbeat: heartbeat, logger: logger,
            quota: quota)
        do {
            return try Vault(backend: backend, keyring: keyring, directory: self, logger: logger)
        } catch {
            backend.close()
            throw DataDirectoryError(.io, "cannot open the PostgreSQL database: \(StoreErrors.keychainError(for: error))")
        }
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
