import Foundation
import KeychainTestSupport
import KeychainCore
import Testing

@testable import KeychainStore
@testable import KeychainSQLite

/// A vault with a few items, and a target directory to restore into.
private final class BackupFixture: @unchecked Sendable {
    let source: VaultFixture
    let scratch = TemporaryDirectory()
    let target: DataDirectory

    init() throws {
        source = try VaultFixture()
        try source.vault.items.add((0..<40).map { item(account: "a\($0)", secret: String(repeating: "s\($0)", count: 40)) })
        target = DataDirectory(path: scratch.path + "/target")
    }

    var masterKeyPath: String { source.dataDirectory.masterKeyPath }

    /// A plain snapshot of the source database, as an attacker with the database file has it.
    func plainSnapshot(named name: String) throws -> String {
        let path = scratch.path + "/" + name
        try source.vault.sqlitePool!.read { db in try db.backup(into: path) }
        return path
    }

    /// A sealed backup of `plain` under the source vault's backup key, in chunks of `chunkSize`.
    func seal(_ plain: String, chunkSize: Int = 4096) throws -> String {
        let sealed = plain + ".sealed"
        try SealedBackup.seal(from: plain, to: sealed, key: source.vault.keyring.backupKey(), chunkSize: chunkSize)
        return sealed
    }

    /// Restores `file` into the target with the source's master key, expecting a refusal with
    /// `code`; then checks that nothing was written (only the directory's lock file is there).
    func expectRefused(
        _ file: String, _ code: DataDirectoryError.Code, mentioning words: String? = nil,
        masterKey: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            _ = try target.restore(from: file, masterKeyFile: masterKey ?? masterKeyPath, force: false, logger: quietLogger)
            Issue.record("restore accepted \(file)", sourceLocation: sourceLocation)
        } catch let error as DataDirectoryError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            if let words { #expect(error.description.contains(words), "\(error)", sourceLocation: sourceLocation) }
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
        let left = (try? FileManager.default.contentsOfDirectory(atPath: target.path)) ?? []
        #expect(left.filter { $0 != "keychaind.lock" } == [], "restore left \(left)", sourceLocation: sourceLocation)
    }
}

private func write(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

private func contents(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

@Suite("Sealed backups: restore verifies the whole backup before it writes anything")
struct SealedBackupTests {
    /// Issue 29 item 2, as reproduced: an admin client with a chosen token hash and a trigger
    /// that re-creates it after deletion, inserted into a backup with SQLite, was restored and the
    /// planted token read every secret. A backup is now sealed: the edited file is refused.
    @Test func aBackupEditedWithSQLiteToPlantAnAdminIsRefused() throws {
        let fixture = try BackupFixture()
        let path = try fixture.plainSnapshot(named: "edited.db")
        let db = try SQLiteConnection(path: path, wal: false)
        let plantedHash = Digest.sha256(Array("kc_planted".utf8))
        try db.execute("INSERT INTO clients (name, access_groups, role, created) VALUES ('mallory', '[\"g1\"]', 'admin', 0)")
        try db.execute(
            "INSERT INTO tokens (accessor, token_hash, client, issued) VALUES ('kca_00000000000000000000000000000000', ?, 'mallory', 0)",
            [.blob(plantedHash)])
        try db.executeScript(
            """
            CREATE TRIGGER keep_mallory AFTER DELETE ON tokens WHEN old.client = 'mallory' BEGIN
                INSERT INTO tokens (accessor, token_hash, client, issued) VALUES (old.accessor, old.token_hash, 'mallory', 0);
            END;
            """)
        db.close()
        fixture.expectRefused(path, .badBackup, mentioning: "not a sealed keychaind backup")
        // Sealed as a whole, the same file would still be refused for its trigger (below); and
        // the sealed backups keychaind writes cannot be edited without failing authentication.
    }

    /// The second line of defence: a database that authenticates (sealed with this vault's own
    /// backup key) but holds schema objects keychaind does not create is refused too.
    @Test(arguments: [
        "CREATE TRIGGER t AFTER DELETE ON clients BEGIN INSERT INTO clients SELECT * FROM clients; END;",
        "CREATE VIEW v AS SELECT * FROM clients;",
        "CREATE TABLE extra (x);",
        "CREATE INDEX extra_index ON clients(role);",
    ])
    func aSealedBackupWithForeignSchemaObjectsIsRefused(statement: String) throws {
        let fixture = try BackupFixture()
        let path = try fixture.plainSnapshot(named: "schema.db")
        let db = try SQLiteConnection(path: path, wal: false)
        try db.executeScript(statement)
        db.close()
        fixture.expectRefused(try fixture.seal(path), .badBackup, mentioning: "schema object keychaind does not create")
    }

    @Test func aSealedBackupWithAChangedTableDefinitionIsRefused() throws {
        let fixture = try BackupFixture()
        let path = try fixture.plainSnapshot(named: "altered.db")
        let db = try SQLiteConnection(path: path, wal: false)
        try db.executeScript("ALTER TABLE clients ADD COLUMN note TEXT;")
        db.close()
        fixture.expectRefused(try fixture.seal(path), .badBackup, mentioning: "schema object")
    }

    @Test func everyChangedByteCutAppendAndSwapIsRefused() throws {
        let fixture = try BackupFixture()
        let chunkSize = 4096
        let sealedPath = try fixture.seal(try fixture.plainSnapshot(named: "base.db"), chunkSize: chunkSize)
        let sealed = try contents(sealedPath)
        let record = chunkSize + 16
        let header = SealedBackup.headerSize
        let records = (sealed.count - header + record - 1) / record
        #expect(records >= 4, "the test needs several chunks")
        let altered = fixture.scratch.path + "/altered"

        // Every header byte, and the first, a middle and the last byte of every record.
        var offsets = Array(0..<header)
        for index in 0..<records {
            let start = header + index * record
            let end = min(start + record, sealed.count) - 1
            offsets += [start, (start + end) / 2, end]
        }
        for offset in offsets {
            var bytes = sealed
            bytes[offset] ^= 0x01
            try write(bytes, to: altered)
            // Magic and version: not a backup this build reads; the rest of the header: its check fails.
            let code: DataDirectoryError.Code = (17..<header).contains(offset) ? .wrongMasterKey : .badBackup
            fixture.expectRefused(altered, code)
        }
        // Cut mid-chunk, at a chunk boundary (the final chunk dropped), inside the header.
        for length in [sealed.count - 100, header + (records - 1) * record, header + record, header - 1, 0] {
            try write(Array(sealed[0..<length]), to: altered)
            fixture.expectRefused(altered, .badBackup)
        }
        // Bytes appended; the final record appended again.
        try write(sealed + [0], to: altered)
        fixture.expectRefused(altered, .badBackup)
        try write(sealed + sealed[(header + (records - 1) * record)...], to: altered)
        fixture.expectRefused(altered, .badBackup)
        // Two chunks swapped.
        var swapped = sealed
        let first = header..<(header + record)
        let second = (header + record)..<(header + 2 * record)
        swapped.replaceSubrange(first, with: sealed[second])
        swapped.replaceSubrange(second, with: sealed[first])
        try write(swapped, to: altered)
        fixture.expectRefused(altered, .badBackup, mentioning: "chunk 0")
        // A chunk of another backup of the same vault (another file key) in its place.
        let otherPath = try fixture.seal(try fixture.plainSnapshot(named: "other.db"), chunkSize: chunkSize)
        var spliced = sealed
        spliced.replaceSubrange(second, with: try contents(otherPath)[second])
        try write(spliced, to: altered)
        fixture.expectRefused(altered, .badBackup, mentioning: "chunk 1")
        // Unchanged, it restores.
        let report = try fixture.target.restore(
            from: sealedPath, masterKeyFile: fixture.masterKeyPath, force: false, logger: quietLogger)
        #expect(report.items == 40)
    }

    @Test func aBackupOfAnotherVaultIsRefused() throws {
        let fixture = try BackupFixture()
        let other = try VaultFixture()
        let path = fixture.scratch.path + "/other.backup"
        try other.vault.backup(to: path)
        fixture.expectRefused(path, .wrongMasterKey, mentioning: "not sealed under this master key")
    }

    @Test func aBackupRoundTripsWithTheMasterKeyItWasMadeUnder() throws {
        let fixture = try BackupFixture()
        let vault = fixture.source.vault
        let path = fixture.scratch.path + "/vault.backup"
        try vault.backup(to: path)
        #expect(Array(try contents(path).prefix(16)) == SealedBackup.magic)
        // Sealed: no page of the database shows through.
        #expect(try contents(path).firstRange(of: Array("SQLite format 3".utf8)) == nil)
        #expect(try contents(path).firstRange(of: Array("admin".utf8)) == nil)

        let report = try fixture.target.restore(
            from: path, masterKeyFile: fixture.masterKeyPath, force: false, logger: quietLogger)
        #expect(report.items == 40 && report.clients == 1 && report.masterKey == .installed)
        #expect(try MasterKeyFile.read(from: fixture.target.masterKeyPath) == MasterKeyFile.read(from: fixture.masterKeyPath))
        let restored = try fixture.target.open(logger: quietLogger)
        defer { restored.close() }
        let all = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"])
        let items = try restored.items.find(all, limit: nil, after: nil, reading: .all).items
        #expect(items.count == 40)
        #expect(items.first?.secret?.utf8String() == String(repeating: "s0", count: 40))
        #expect(try restored.clients.clients().map(\.name) == ["admin"])
    }

    /// KV secrets (metadata, versions, their usage) and the cluster id come back with a restore,
    /// which drops only login tokens.
    @Test func kvSecretsAndTheClusterIDSurviveARestore() throws {
        let fixture = try BackupFixture()
        let vault = fixture.source.vault
        let key = KVSecretKey(group: "g1", path: "app/db")
        let now = Date().truncatedToMilliseconds
        let metadata = KVMetadata(customMetadata: ["owner": "ops"], currentVersion: 1, oldestVersion: 1, createdTime: now, updatedTime: now)
        try vault.items.kvPutMetadata(metadata, of: key)
        try vault.items.kvPutVersion(KVVersion(number: 1, createdTime: now, data: SecretBytes(utf8: "{\"a\":1}")), of: key)
        let usage = try vault.sqlitePool!.read { try GroupUsageTable.usage(of: "g1", on: $0) }
        let path = fixture.scratch.path + "/vault.backup"
        try vault.backup(to: path)
        _ = try fixture.target.restore(from: path, masterKeyFile: fixture.masterKeyPath, force: false, logger: quietLogger)
        let restored = try fixture.target.open(logger: quietLogger)
        defer { restored.close() }
        #expect(restored.clusterID == vault.clusterID)
        #expect(try restored.items.kvMetadata(of: key) == metadata)
        #expect(try restored.items.kvVersion(1, of: key)?.data?.utf8String() == "{\"a\":1}")
        #expect(try restored.sqlitePool!.read { try GroupUsageTable.usage(of: "g1", on: $0) } == usage)
    }

    /// A backup holds no connect session (docs/api.md, "Upgrades"): a restore brings none back,
    /// and the live vault keeps its own.
    @Test func connectSessionsStayOutOfABackup() throws {
        let fixture = try BackupFixture()
        let vault = fixture.source.vault
        let session = ConnectSessionStoreConformance.session("in-flight")
        try vault.connectSessions.create(session)
        let path = fixture.scratch.path + "/vault.backup"
        try vault.backup(to: path)
        #expect(try vault.connectSessions.session(id: "in-flight")?.verifier == session.verifier)
        _ = try fixture.target.restore(from: path, masterKeyFile: fixture.masterKeyPath, force: false, logger: quietLogger)
        let restored = try fixture.target.open(logger: quietLogger)
        defer { restored.close() }
        #expect(try restored.connectSessions.session(id: "in-flight") == nil)
        #expect(try restored.sqlitePool!.read { try $0.scalarInt("SELECT count(*) FROM connect_sessions") } == 0)
    }

    /// A backup made before a rekey restores with the master key of its time, not the new one.
    @Test func aBackupFromBeforeARekeyNeedsTheOldMasterKey() throws {
        let fixture = try BackupFixture()
        let vault = fixture.source.vault
        let path = fixture.scratch.path + "/before-rekey.backup"
        try vault.backup(to: path)
        let oldKey = fixture.scratch.path + "/old-master.key"
        try MasterKeyFile.write(try MasterKeyFile.read(from: fixture.masterKeyPath), to: oldKey)
        _ = try vault.rekey()
        fixture.expectRefused(path, .wrongMasterKey)
        let report = try fixture.target.restore(from: path, masterKeyFile: oldKey, force: false, logger: quietLogger)
        #expect(report.items == 40 && report.masterKey == .installed)
        // And a backup taken after the rekey opens with the new key only.
        let after = fixture.scratch.path + "/after-rekey.backup"
        try vault.backup(to: after)
        let other = DataDirectory(path: fixture.scratch.path + "/other")
        #expect(throws: DataDirectoryError.self) {
            _ = try other.restore(from: after, masterKeyFile: oldKey, force: false, logger: quietLogger)
        }
        _ = try other.restore(from: after, masterKeyFile: fixture.masterKeyPath, force: false, logger: quietLogger)
    }

    @Test func restoreWithoutAnyMasterKeyIsRefused() throws {
        let fixture = try BackupFixture()
        let path = fixture.scratch.path + "/vault.backup"
        try fixture.source.vault.backup(to: path)
        #expect {
            _ = try fixture.target.restore(from: path, force: false, logger: quietLogger)
        } throws: { ($0 as? DataDirectoryError)?.code == .missingMasterKey }
    }

    @Test func connectionsDoNotTrustTheSchema() throws {
        let fixture = try BackupFixture()
        #expect(try fixture.source.vault.sqlitePool!.read { try $0.scalarInt("PRAGMA trusted_schema") } == 0)
    }
}
