import CSQLite
import Foundation
import KeychainTestSupport
import KeychainCore
import Testing
@testable import KeychainStore
@testable import KeychainSQLite

private func mode(_ path: String) -> Int {
    (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
}

private func expectError(_ code: DataDirectoryError.Code, containing text: String, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected DataDirectoryError \(code)")
    } catch let error as DataDirectoryError {
        #expect(error.code == code, "\(error)")
        #expect(error.description.contains(text), "\(error)")
    } catch {
        Issue.record("unexpected \(error)")
    }
}

@Suite("Data directory, vault and keyring")
struct DataDirectoryTests {
    @Test func initializeCreatesPrivateFilesAndAdmin() throws {
        let temp = TemporaryDirectory()
        let directory = DataDirectory(path: temp.dataPath)
        #expect(!directory.isInitialized)
        try directory.initialize(logger: quietLogger)
        #expect(directory.isInitialized)
        #expect(mode(directory.path) == 0o700)
        #expect(mode(directory.masterKeyPath) == 0o600)
        #expect(mode(directory.adminTokenPath) == 0o600)
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.masterKeyPath)).count == 32)
        let tokenFile = try String(contentsOfFile: directory.adminTokenPath, encoding: .utf8)
        #expect(tokenFile.hasPrefix("kc_") && tokenFile.hasSuffix("\n"))
        let token = String(tokenFile.dropLast())
        // No temporary files are left behind.
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!files.contains { $0.hasPrefix(".tmp") })
        let vault = try directory.open(logger: quietLogger)
        defer { vault.close() }
        // Whatever the process's umask (keychaind's own is 077; a library user's often 022):
        // SQLite gives the WAL and shared-memory files the database file's mode.
        for file in ["", "-wal", "-shm"] {
            #expect(mode(directory.databasePath + file) == 0o600, "keychain.db\(file)")
        }
        let admin = try vault.clients.client(forTokenHash: vault.tokenIssuer.hash(token))
        #expect(admin?.name == "admin" && admin?.accessGroups == ["admin"] && admin?.role == .admin)
        #expect(try vault.clients.client(forTokenHash: vault.tokenIssuer.hash(token + "x")) == nil)
        expectError(.alreadyInitialized, containing: directory.path) { try directory.initialize(logger: quietLogger) }
    }

    @Test func restartKeepsItemsClientsAndSecrets() throws {
        let fixture = try VaultFixture()
        let a = item(account: "a", secret: "alpha")
        try fixture.vault.items.add([a])
        try fixture.vault.clients.addClient(
            Client(name: "app", accessGroups: ["g1", "g2"], role: .client, createdAt: Date()), tokenHash: [1, 2, 3])
        fixture.vault.close()
        fixture.vault.close()  // idempotent
        #expect(throws: KeychainError.self) { try fixture.vault.items.countByClass() }
        let reopened = try fixture.dataDirectory.open(logger: quietLogger)
        defer { reopened.close() }
        let page = try reopened.items.find(
            ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"]), limit: nil, after: nil, reading: .all)
        #expect(page.items.map(\.persistentRef) == [a.persistentRef])
        #expect(page.items.first?.secret?.utf8String() == "alpha")
        #expect(try reopened.clients.client(forTokenHash: [1, 2, 3])?.accessGroups == ["g1", "g2"])
    }

    @Test func crashWithoutCloseLosesNothing() throws {
        let fixture = try VaultFixture()
        let items = (0..<20).map { item(account: "a\($0)", secret: "s\($0)") }
        for item in items { try fixture.vault.items.add([item]) }
        // A second vault on the same directory, as after a crash and restart (the first is never closed).
        let second = try fixture.dataDirectory.open(logger: quietLogger)
        defer { second.close() }
        let page = try second.items.find(
            ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"]), limit: nil, after: nil, reading: .all)
        #expect(page.items.map(\.persistentRef) == items.map(\.persistentRef))
        #expect(page.items.map { $0.secret?.utf8String() } == (0..<20).map { "s\($0)" })
    }

    @Test func noFileHoldsASecretInClear() throws {
        let fixture = try VaultFixture()
        let secret = "S3cr3t-" + UUID().uuidString
        let encodedSecret = Data(secret.utf8).base64EncodedString()
        for index in 0..<10 { try fixture.vault.items.add([item(account: "a\(index)", secret: secret)]) }
        try fixture.vault.items.update(
            ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"]),
            with: ItemChanges(attributes: [.accessGroup: .string("g2")], modificationDate: Date()))
        func scan() throws {
            let files = try FileManager.default.contentsOfDirectory(atPath: fixture.dataDirectory.path)
            #expect(files.contains("keychain.db-wal"))
            for file in files {
                let data = try Data(contentsOf: URL(fileURLWithPath: fixture.dataDirectory.path + "/" + file))
                #expect(data.range(of: Data(secret.utf8)) == nil, "\(file) holds the secret")
                #expect(data.range(of: Data(encodedSecret.utf8)) == nil, "\(file) holds the secret in base64")
            }
        }
        try scan()
        // And after a checkpoint moved the WAL into the database file.
        try fixture.vault.sqlitePool!.write { _ = try $0.execute("PRAGMA wal_checkpoint(FULL)") }
        try scan()
    }

    @Test func masterKeyFileRules() throws {
        let temp = TemporaryDirectory()
        let path = temp.path + "/master.key"
        let key = try MasterKeyFile.generate()
        try MasterKeyFile.write(key, to: path)
        #expect(mode(path) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.path) == ["master.key"])
        #expect(try MasterKeyFile.read(from: path) == key)
        chmod(path, 0o644)
        expectError(.insecureMasterKey, containing: "readable by group or others") { _ = try MasterKeyFile.read(from: path) }
        expectError(.insecureMasterKey, containing: "chmod 600 \(path)") { _ = try MasterKeyFile.read(from: path) }
        chmod(path, 0o600)
        try Data(repeating: 7, count: 31).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        expectError(.badMasterKey, containing: path) { _ = try MasterKeyFile.read(from: path) }
        // Overwriting is atomic too.
        try MasterKeyFile.write(key, to: path)
        #expect(try MasterKeyFile.read(from: path) == key)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.path) == ["master.key"])
    }

    @Test func openRefusesBadDirectories() throws {
        let fixture = try VaultFixture()
        let directory = fixture.dataDirectory
        fixture.vault.close()
        // Wrong master key.
        let original = try MasterKeyFile.read(from: directory.masterKeyPath)
        try MasterKeyFile.write(try MasterKeyFile.generate(), to: directory.masterKeyPath)
        expectError(.wrongMasterKey, containing: "does not open the keyring") { _ = try directory.open(logger: quietLogger) }
        try MasterKeyFile.write(original, to: directory.masterKeyPath)
        // Group-readable master key.
        chmod(directory.masterKeyPath, 0o640)
        expectError(.insecureMasterKey, containing: "readable by group or others") { _ = try directory.open(logger: quietLogger) }
        chmod(directory.masterKeyPath, 0o600)
        try directory.open(logger: quietLogger).close()
        // Not a directory.
        expectError(.notADirectory, containing: directory.masterKeyPath) {
            _ = try DataDirectory(path: directory.masterKeyPath).open(logger: quietLogger)
        }
        // Missing master key with an existing database.
        try FileManager.default.moveItem(atPath: directory.masterKeyPath, toPath: directory.masterKeyPath + ".away")
        expectError(.missingMasterKey, containing: directory.masterKeyPath) { _ = try directory.open(logger: quietLogger) }
        try FileManager.default.moveItem(atPath: directory.masterKeyPath + ".away", toPath: directory.masterKeyPath)
        // A corrupted database.
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: directory.databasePath + suffix) }
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: directory.databasePath))
        expectError(.damaged, containing: directory.databasePath) { _ = try directory.open(logger: quietLogger) }
    }

    /// A term started inside a write that rolls back is rolled back with it: the keyring forgets
    /// it, and the next write starts it again, for good.
    @Test func aTermStartedByARolledBackWriteIsStartedAgain() throws {
        let fixture = try VaultFixture(rotationThreshold: 3)
        let keyring = fixture.vault.keyring
        try fixture.vault.items.add((0..<3).map { item(account: "a\($0)") })
        #expect(keyring.terms == [1] && keyring.currentTermEncryptions == 3)
        #expect(throws: KeychainError.duplicateItem()) {
            try fixture.vault.items.add([item(account: "b"), item(account: "a0")])
        }
        #expect(keyring.terms == [1] && keyring.currentTerm == 1)
        try fixture.vault.items.add([item(account: "b", secret: "after")])
        #expect(keyring.terms == [1, 2] && keyring.currentTermEncryptions == 1)
        fixture.vault.close()
        let reopened = try fixture.dataDirectory.open(logger: quietLogger, rotationThreshold: 3)
        defer { reopened.close() }
        #expect(reopened.keyring.terms == [1, 2])
        let page = try reopened.items.find(
            ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"]), limit: nil, after: nil, reading: .all)
        #expect(page.items.map { $0.secret?.utf8String() } == ["secret", "secret", "secret", "after"])
    }

    /// The encryption counts are written once per transaction, before it commits: what a write
    /// of several sealed values counted (items, a KV version and its metadata) is what a
    /// reopened keyring reads.
    @Test func encryptionCountsOfATransactionAreCommittedWithIt() throws {
        let fixture = try VaultFixture()
        try fixture.vault.items.add((0..<4).map { item(account: "a\($0)") })
        let key = KVSecretKey(group: "g1", path: "app")
        let now = Date()
        try fixture.vault.items.transaction { transaction in
            try transaction.kvPutMetadata(
                KVMetadata(customMetadata: ["owner": "a"], currentVersion: 1, createdTime: now, updatedTime: now), of: key)
            try transaction.kvPutVersion(KVVersion(number: 1, createdTime: now, data: SecretBytes(utf8: "{}")), of: key)
        }
        #expect(fixture.vault.keyring.currentTermEncryptions == 6)
        fixture.vault.close()
        let reopened = try fixture.dataDirectory.open(logger: quietLogger)
        defer { reopened.close() }
        #expect(reopened.keyring.currentTermEncryptions == 6)
    }

    @Test func newTermStartsAutomaticallyAndOldTermsStillOpen() throws {
        let fixture = try VaultFixture(rotationThreshold: 3)
        let items = (0..<8).map { item(account: "a\($0)", secret: "s\($0)") }
        for item in items { try fixture.vault.items.add([item]) }
        let keyring = fixture.vault.keyring
        #expect(keyring.terms == [1, 2, 3])
        #expect(keyring.currentTerm == 3 && keyring.currentTermEncryptions == 2)
        let boxTerms = try fixture.vault.sqlitePool!.write { db in
            try db.query("SELECT secret FROM items ORDER BY seq") { try SealedBox.header(of: $0.blob(0)).term }
        }
        #expect(boxTerms == [1, 1, 1, 2, 2, 2, 3, 3])
        fixture.vault.close()
        let reopened = try fixture.dataDirectory.open(logger: quietLogger, rotationThreshold: 3)
        defer { reopened.close() }
        #expect(reopened.keyring.currentTerm == 3 && reopened.keyring.currentTermEncryptions == 2)
        let page = try reopened.items.find(
            ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"]), limit: nil, after: nil, reading: .all)
        #expect(page.items.map { $0.secret?.utf8String() } == (0..<8).map { "s\($0)" })
        try reopened.items.add([item(account: "next")])
        #expect(reopened.keyring.currentTerm == 3)
        try reopened.items.add([item(account: "after next")])
        #expect(reopened.keyring.currentTerm == 4)
    }

    @Test func rotateThenRewrapAndReopenWithTheNewKey() throws {
        let fixture = try VaultFixture()
        try fixture.vault.items.add([item(account: "old", secret: "before")])
        #expect(try fixture.vault.keyring.rotate() == 2)
        try fixture.vault.items.add([item(account: "new", secret: "after")])
        let newKey = try MasterKeyFile.generate()
        let oldKey = try MasterKeyFile.read(from: fixture.dataDirectory.masterKeyPath)
        try fixture.vault.keyring.rewrap(under: newKey)
        try MasterKeyFile.write(newKey, to: fixture.dataDirectory.masterKeyPath)
        // The open vault keeps working (its data keys did not change).
        try fixture.vault.items.add([item(account: "third", secret: "still")])
        fixture.vault.close()
        let reopened = try fixture.dataDirectory.open(logger: quietLogger)
        let page = try reopened.items.find(
            ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"]), limit: nil, after: nil, reading: .all)
        #expect(page.items.map { $0.secret?.utf8String() } == ["before", "after", "still"])
        #expect(reopened.keyring.terms == [1, 2])
        reopened.close()
        try MasterKeyFile.write(oldKey, to: fixture.dataDirectory.masterKeyPath)
        expectError(.wrongMasterKey, containing: "does not open the keyring") {
            _ = try fixture.dataDirectory.open(logger: quietLogger)
        }
    }
}

@Suite("Schema")
struct SchemaTests {
    @Test(arguments: ItemClass.storedClasses)
    func primaryKeyIndexMatchesTheCatalogue(itemClass: ItemClass) throws {
        let fixture = try VaultFixture()
        let sql = try #require(try fixture.vault.sqlitePool!.write { db in
            try db.scalarText("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?",
                              [.text(ItemColumns.primaryKeyIndexName(itemClass))])
        })
        #expect(sql.hasPrefix("CREATE UNIQUE INDEX"))
        #expect(sql.hasSuffix("WHERE class = '\(itemClass.code)'"))
        let regex = try Regex(#"ifnull\("([A-Za-z]+)", ([^)]*)\)"#)
        let found = sql.matches(of: regex).map { (String($0.output[1].substring!), String($0.output[2].substring!)) }
        let expected = Attribute.primaryKey(of: itemClass)
        #expect(Set(found.map(\.0)) == Set(expected.map(\.name)))
        #expect(found.count == expected.count)
        for (name, literal) in found {
            let attribute = try #require(Attribute.named(name))
            switch AttributeValue.primaryKeyDefault(for: attribute.valueType) {
            case .string(let s): #expect(literal == "'\(s)'")
            case .data(let d): #expect(d.isEmpty && literal == "x''")
            case .integer(let n): #expect(literal == "\(n)")
            case .bool(let b): #expect(literal == (b ? "1" : "0"))
            case .date(let date): #expect(literal == "\(date.millisecondsSince1970)")
            }
        }
    }

    @Test func sqliteKeepsNoMemoryStatistics() throws {
        // With statistics on, every SQLite allocation takes one process-wide mutex.
        let fixture = try VaultFixture()
        _ = try fixture.vault.sqlitePool!.write { db in try db.scalarInt("SELECT count(*) FROM items") }
        #expect(sqlite3_memory_used() == 0, "sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) was applied")
    }

    @Test func lookupByServiceAndAccountUsesTheLookupIndexInCreationOrder() throws {
        let fixture = try VaultFixture()
        let filter = ItemFilter(
            itemClass: .genericPassword, accessGroups: ["g1"],
            equal: [.service: .string("s"), .account: .string("a"), .synchronizable: .bool(false)])
        let (clause, values) = ItemTable.whereClause(filter)
        let plan = try fixture.vault.sqlitePool!.write { db in
            try db.query("EXPLAIN QUERY PLAN SELECT seq FROM items WHERE \(clause) ORDER BY seq", values) { $0.text(3) }
        }
        #expect(plan.contains { $0.contains("USING INDEX items_lookup_genp") }, "\(plan)")
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "no sort per query: \(plan)")
    }
}
