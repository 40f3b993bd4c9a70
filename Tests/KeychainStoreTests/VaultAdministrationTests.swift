import Foundation
import KeychainTestSupport
import KeychainCore
import Synchronization
import Testing

@testable import KeychainStore
@testable import KeychainSQLite

private let everything = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"])

private func secrets(_ vault: Vault) throws -> [String: String] {
    let page = try vault.items.find(everything, limit: nil, after: nil, reading: .all)
    var result: [String: String] = [:]
    for item in page.items {
        guard case .string(let account)? = item.attributes[.account] else { continue }
        result[account] = item.secret?.utf8String()
    }
    return result
}

private func expectLocked(_ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected errSecInteractionNotAllowed")
    } catch let error as KeychainError {
        #expect(error.code == .interactionNotAllowed, "\(error)")
    } catch {
        Issue.record("unexpected \(error)")
    }
}

private struct SimulatedCrash: Error {}

@Suite("Vault administration: lock, unlock, rotate, rekey, backup, restore")
struct VaultAdministrationTests {
    /// Backups too need the keys: they are sealed under a key derived from the master key,
    /// which lives with the data keys.
    @Test func lockRefusesItemOperationsAndBackupsButNotClientsOrCounts() throws {
        let fixture = try VaultFixture()
        let vault = fixture.vault
        try vault.items.add([item(account: "a", secret: "one")])
        vault.lock()
        #expect(vault.isLocked && vault.keyring.isLocked && vault.status.locked)
        expectLocked { try vault.items.add([item(account: "b")]) }
        expectLocked { _ = try vault.items.find(everything, limit: nil, after: nil, reading: .attributes) }
        expectLocked { _ = try vault.items.update(everything, with: ItemChanges(modificationDate: Date())) }
        expectLocked { _ = try vault.items.delete(everything) }
        expectLocked { _ = try vault.rotate(reencrypt: false) }
        expectLocked { _ = try vault.rekey() }
        #expect(try vault.items.countByClass()[.genericPassword] == 1)
        #expect(try vault.clients.clients().map(\.name) == ["admin"])
        expectLocked { _ = try vault.backupFile() }
        vault.lock()  // idempotent

        try vault.unlock()
        #expect(!vault.isLocked)
        #expect(try secrets(vault) == ["a": "one"])
        try vault.unlock()  // idempotent
    }

    @Test func unlockWithAnotherMasterKeyFailsAndStaysLocked() throws {
        let fixture = try VaultFixture()
        let path = fixture.dataDirectory.masterKeyPath
        let original = try MasterKeyFile.read(from: path)
        try fixture.vault.items.add([item(account: "a", secret: "one")])
        fixture.vault.lock()
        try MasterKeyFile.write(try MasterKeyFile.generate(), to: path)
        #expect(throws: KeychainError.self) { try fixture.vault.unlock() }
        do { try fixture.vault.unlock() } catch let error as KeychainError { #expect(error.code == .authFailed) }
        #expect(fixture.vault.isLocked)
        // A missing key file is refused the same way.
        unlink(path)
        do { try fixture.vault.unlock() } catch let error as KeychainError { #expect(error.code == .authFailed) }
        #expect(fixture.vault.isLocked)
        try MasterKeyFile.write(original, to: path)
        try fixture.vault.unlock()
        #expect(try secrets(fixture.vault) == ["a": "one"])
    }

    @Test func openLockedNeedsNoMasterKeyUntilUnlock() throws {
        let fixture = try VaultFixture()
        try fixture.vault.items.add([item(account: "a", secret: "one")])
        fixture.vault.close()
        let path = fixture.dataDirectory.masterKeyPath
        try FileManager.default.moveItem(atPath: path, toPath: path + ".away")
        let vault = try fixture.dataDirectory.open(logger: quietLogger, locked: true)
        defer { vault.close() }
        #expect(vault.isLocked && vault.status.currentTerm == 1)
        expectLocked { _ = try secrets(vault) }
        #expect(throws: KeychainError.self) { try vault.unlock() }
        try FileManager.default.moveItem(atPath: path + ".away", toPath: path)
        try vault.unlock()
        #expect(try secrets(vault) == ["a": "one"])
    }

    /// Writers and readers race lock/unlock: every operation either completes or fails with
    /// errSecInteractionNotAllowed, and every acknowledged add is stored whole. The vault is
    /// locked and unlocked after the workers have gone round a few times, and the workers are
    /// joined before the check.
    @Test func lockingUnderLoadNeverHalfWrites() throws {
        let fixture = try VaultFixture()
        let vault = fixture.vault
        let acknowledged = Mutex<[String: String]>([:])
        let unexpected = Mutex<[String]>([])
        let done = Atomic<Bool>(false)
        let rounds = Atomic<Int>(0)
        let finished = DispatchGroup()
        let workers = (0..<3).map { worker in
            Thread {
                defer { finished.leave() }
                var n = 0
                while !done.load(ordering: .relaxed) {
                    defer { rounds.add(1, ordering: .relaxed) }
                    n += 1
                    let account = "w\(worker)-\(n)"
                    do {
                        try vault.items.add([item(account: account, secret: "secret-\(account)")])
                        acknowledged.withLock { $0[account] = "secret-\(account)" }
                        _ = try vault.items.find(everything, limit: 5, after: nil, reading: .all)
                    } catch let error as KeychainError where error.code == .interactionNotAllowed {
                        continue
                    } catch {
                        unexpected.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        /// Returns once the workers have gone round `count` more times.
        func letWorkersRun(_ count: Int) {
            let target = rounds.load(ordering: .relaxed) + count
            while rounds.load(ordering: .relaxed) < target { sched_yield() }
        }
        for worker in workers {
            finished.enter()
            worker.start()
        }
        do {
            defer {
                done.store(true, ordering: .relaxed)
                finished.wait()
            }
            for _ in 0..<40 {
                letWorkersRun(3)
                vault.lock()
                #expect(vault.isLocked)
                letWorkersRun(3)
                try vault.unlock()
            }
        }
        #expect(unexpected.withLock { $0 }.isEmpty, "\(unexpected.withLock { $0 })")
        let stored = try secrets(vault)
        let expected = acknowledged.withLock { $0 }
        #expect(expected.count > 0)
        for (account, secret) in expected { #expect(stored[account] == secret, "\(account)") }
    }

    @Test func rekeyReplacesTheMasterKeyFileAndTheOldKeyNoLongerOpens() throws {
        let fixture = try VaultFixture()
        let path = fixture.dataDirectory.masterKeyPath
        let oldKey = try MasterKeyFile.read(from: path)
        try fixture.vault.items.add([item(account: "a", secret: "one")])
        _ = try fixture.vault.rotate(reencrypt: false)
        #expect(try fixture.vault.rekey() == 2)
        try fixture.vault.items.add([item(account: "b", secret: "two")])
        let newKey = try MasterKeyFile.read(from: path)
        #expect(newKey != oldKey)
        #expect(!FileManager.default.fileExists(atPath: fixture.dataDirectory.pendingMasterKeyPath))
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        fixture.vault.close()
        let reopened = try fixture.dataDirectory.open(logger: quietLogger)
        #expect(try secrets(reopened) == ["a": "one", "b": "two"])
        reopened.close()
        try MasterKeyFile.write(oldKey, to: path)
        #expect(throws: DataDirectoryError.self) { _ = try fixture.dataDirectory.open(logger: quietLogger) }
    }

    #if KEYCHAIND_FAULT_INJECTION
    /// A crash at each point of the rekey sequence leaves a master key file that opens the
    /// keyring; opening finishes or discards the interrupted rekey.
    @Test(arguments: FaultInjection.Point.allCases)
    func rekeyInterruptedAtEachPointLosesNothing(point: FaultInjection.Point) throws {
        let directory = TemporaryDirectory()
        var dataDirectory = DataDirectory(path: directory.dataPath)
        try dataDirectory.initialize(logger: quietLogger)
        let oldKey = try MasterKeyFile.read(from: dataDirectory.masterKeyPath)
        dataDirectory.faults = FaultInjection(point: point) { _ in throw SimulatedCrash() }
        let vault = try dataDirectory.open(logger: quietLogger)
        try vault.items.add([item(account: "a", secret: "one")])
        _ = try vault.rotate(reencrypt: false)
        try vault.items.add([item(account: "b", secret: "two")])
        #expect(throws: KeychainError.self) { _ = try vault.rekey() }
        vault.close()  // the "crash": nothing after the fault point ran
        dataDirectory.faults = .none

        let pendingBefore = FileManager.default.fileExists(atPath: dataDirectory.pendingMasterKeyPath)
        #expect(pendingBefore == (point != .rekeyAfterRename))
        let reopened = try dataDirectory.open(logger: quietLogger)
        defer { reopened.close() }
        #expect(try secrets(reopened) == ["a": "one", "b": "two"])
        #expect(!FileManager.default.fileExists(atPath: dataDirectory.pendingMasterKeyPath))
        let keyNow = try MasterKeyFile.read(from: dataDirectory.masterKeyPath)
        #expect((keyNow == oldKey) == (point == .rekeyAfterNewKeyFile))
        // A later rekey completes normally.
        #expect(try reopened.rekey() == 2)
        #expect(try secrets(reopened) == ["a": "one", "b": "two"])
    }
    #endif

    @Test func backupRestoresIntoAnotherDirectoryWithTheMasterKey() throws {
        let fixture = try VaultFixture()
        try fixture.vault.items.add([item(account: "a", secret: "one")])
        let target = TemporaryDirectory()
        let backupPath = target.path + "/backup.db"
        try fixture.vault.backup(to: backupPath)
        #expect(fixture.vault.status.backupsCompleted == 1 && fixture.vault.status.lastBackup != nil)
        let attributes = try FileManager.default.attributesOfItem(atPath: backupPath)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(!FileManager.default.fileExists(atPath: backupPath + "-wal"))
        try fixture.vault.items.add([item(account: "later", secret: "not in the backup")])

        let restored = DataDirectory(path: target.dataPath)
        let report = try restored.restore(
            from: backupPath, masterKeyFile: fixture.dataDirectory.masterKeyPath, force: false, logger: quietLogger)
        #expect(report.items == 1 && report.clients == 1 && report.terms == 1 && report.masterKey == .installed)
        let vault = try restored.open(logger: quietLogger)
        defer { vault.close() }
        #expect(try secrets(vault) == ["a": "one"])
    }

    @Test func restoreRefusals() throws {
        let fixture = try VaultFixture()
        try fixture.vault.items.add([item(account: "a", secret: "one")])
        let scratch = TemporaryDirectory()
        let backupPath = scratch.path + "/backup.db"
        try fixture.vault.backup(to: backupPath)

        func expectRefused(_ code: DataDirectoryError.Code, _ body: () throws -> Void) {
            do {
                try body()
                Issue.record("expected \(code)")
            } catch let error as DataDirectoryError {
                #expect(error.code == code, "\(error)")
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
        let target = DataDirectory(path: scratch.path + "/target")
        let key = fixture.dataDirectory.masterKeyPath
        // No master key to verify it with.
        expectRefused(.missingMasterKey) { _ = try target.restore(from: backupPath, force: true, logger: quietLogger) }
        // Not a database, not a keychaind database.
        try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: scratch.path + "/junk.db"))
        expectRefused(.badBackup) { _ = try target.restore(from: scratch.path + "/junk.db", masterKeyFile: key, force: true, logger: quietLogger) }
        let foreign = try SQLiteConnection(path: scratch.path + "/foreign.db", wal: false)
        try foreign.execute("CREATE TABLE t (x)")
        foreign.close()
        expectRefused(.badBackup) { _ = try target.restore(from: scratch.path + "/foreign.db", masterKeyFile: key, force: true, logger: quietLogger) }
        expectRefused(.badBackup) { _ = try target.restore(from: scratch.path + "/missing.db", masterKeyFile: key, force: true, logger: quietLogger) }
        // Another master key in the directory.
        try MasterKeyFile.write(try MasterKeyFile.generate(), to: target.masterKeyPath)
        expectRefused(.wrongMasterKey) { _ = try target.restore(from: backupPath, force: false, logger: quietLogger) }
        #expect(!FileManager.default.fileExists(atPath: target.databasePath))
        // The directory in use (a server holds the lock): refused even with force.
        do {
            let lock = try fixture.dataDirectory.acquireLock()
            expectRefused(.inUse) { _ = try fixture.dataDirectory.restore(from: backupPath, force: true, logger: quietLogger) }
            withExtendedLifetime(lock) {}
        }
        // An existing database: refused without force, kept aside with force.
        fixture.vault.close()
        expectRefused(.alreadyInitialized) {
            _ = try fixture.dataDirectory.restore(from: backupPath, force: false, logger: quietLogger)
        }
        let report = try fixture.dataDirectory.restore(from: backupPath, force: true, logger: quietLogger)
        #expect(report.masterKey == .matches)
        let aside = try #require(report.replacedDatabasePath)
        #expect(FileManager.default.fileExists(atPath: aside))
        let vault = try fixture.dataDirectory.open(logger: quietLogger)
        defer { vault.close() }
        #expect(try secrets(vault) == ["a": "one"])
    }

    @Test func scheduledBackupsKeepTheNewest() throws {
        let fixture = try VaultFixture()
        try fixture.vault.items.add([item(account: "a", secret: "one")])
        let scratch = TemporaryDirectory()
        let scheduler = BackupScheduler(
            vault: fixture.vault, directory: scratch.path + "/backups", intervalSeconds: 3600, keep: 2,
            logger: quietLogger)
        try scheduler.start()
        defer { scheduler.stop() }
        for _ in 0..<4 { #expect(scheduler.runOnce() != nil) }
        #expect(scheduler.backups().count == 2)
        #expect(fixture.vault.status.backupsCompleted == 4)
    }
}
