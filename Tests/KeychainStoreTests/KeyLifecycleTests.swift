import Foundation
import KeychainTestSupport
import KeychainCore
import Testing

@testable import KeychainStore
@testable import KeychainSQLite

private let everything = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"])

private func expectCode(_ code: KeychainError.Code, _ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        try body()
        Issue.record("expected \(code)", sourceLocation: sourceLocation)
    } catch let error as KeychainError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
    }
}

private func auditTag(_ keyring: Keyring, _ text: String) -> [UInt8]? {
    var output = [UInt8](repeating: 0, count: 32)
    let ok = Array(text.utf8).withUnsafeBytes { message in
        output.withUnsafeMutableBytes { keyring.derivedMAC(label: "audit", message, into: $0) }
    }
    return ok ? output : nil
}

@Suite("Key lifecycle: the master key is read again, the audit key follows it, old terms retire")
struct KeyLifecycleTests {
    /// Unlocked, the vault keeps no master key: `rotate` reads `master.key` again to wrap the
    /// new term's data key, so a replaced or unsafe key file stops it (and changes nothing).
    @Test func rotateReadsTheMasterKeyFileAgain() throws {
        let fixture = try VaultFixture()
        let vault = fixture.vault
        let path = fixture.dataDirectory.masterKeyPath
        let original = try MasterKeyFile.read(from: path)
        try vault.items.add([item(account: "a", secret: "one")])

        try MasterKeyFile.write(try MasterKeyFile.generate(), to: path)
        expectCode(.authFailed) { _ = try vault.rotate(reencrypt: false) }
        #expect(vault.keyring.terms == [1])
        unlink(path)
        expectCode(.io) { _ = try vault.rotate(reencrypt: false) }
        try MasterKeyFile.write(original, to: path)
        chmod(path, 0o644)
        expectCode(.authFailed) { _ = try vault.rotate(reencrypt: false) }
        #expect(vault.keyring.terms == [1])
        // Serving needs no key file: reads and writes go on meanwhile.
        #expect(try vault.items.find(everything, limit: nil, after: nil, reading: .all).items.count == 1)
        try vault.items.add([item(account: "b", secret: "two")])

        chmod(path, 0o600)
        #expect(try vault.rotate(reencrypt: false) == 2)
        // The new term's key is wrapped under the file's key: the vault reopens with it.
        vault.close()
        let reopened = try fixture.dataDirectory.open(logger: quietLogger)
        defer { reopened.close() }
        #expect(reopened.keyring.terms == [1, 2])
        #expect(try reopened.items.find(everything, limit: nil, after: nil, reading: .all).items.count == 2)
    }

    /// A term started on the rotation threshold (inside a write) reads the key file too, and
    /// during a rekey's last step it finds the key in `master.key.new`.
    @Test func aTermStartedOnTheThresholdReadsTheKeyFile() throws {
        let fixture = try VaultFixture(rotationThreshold: 2)
        let vault = fixture.vault
        try vault.items.add([item(account: "a"), item(account: "b")])
        #expect(vault.keyring.terms == [1])
        try MasterKeyFile.write(try MasterKeyFile.generate(), to: fixture.dataDirectory.masterKeyPath)
        expectCode(.authFailed) { try vault.items.add([item(account: "c")]) }
        #expect(vault.keyring.terms == [1])
        #expect(try vault.items.find(everything, limit: nil, after: nil, reading: .attributes).items.count == 2)
    }

    /// The audit key is derived from the master key: rotation and term retirement leave it
    /// alone, a rekey changes it.
    @Test func theAuditKeyFollowsTheMasterKey() throws {
        let fixture = try VaultFixture()
        let keyring = fixture.vault.keyring
        try fixture.vault.items.add([item(account: "a", secret: "one")])
        let first = try #require(auditTag(keyring, "account\0rbob"))
        _ = try fixture.vault.rotate(reencrypt: true)
        #expect(fixture.vault.waitForReencryption()?.state == .finished)
        #expect(keyring.terms == [2])
        #expect(auditTag(keyring, "account\0rbob") == first)
        _ = try fixture.vault.rekey()
        let afterRekey = try #require(auditTag(keyring, "account\0rbob"))
        #expect(afterRekey != first)
        fixture.vault.lock()
        try fixture.vault.unlock()
        #expect(auditTag(keyring, "account\0rbob") == afterRekey)
    }

    /// Once re-encryption has re-sealed every secret of an old term, the term's wrapped data
    /// key is deleted from the keyring and its key dropped from memory; a backup taken before
    /// still restores (it carries the old term).
    @Test func reencryptionRetiresOldTermsAndOlderBackupsStillRestore() throws {
        let fixture = try VaultFixture()
        let vault = fixture.vault
        try vault.items.add((0..<30).map { item(account: "a\($0)", secret: "secret-\($0)") })
        let scratch = TemporaryDirectory()
        let backup = scratch.path + "/before.backup"
        try vault.backup(to: backup)
        weak var retiredCipher = try vault.keyring.cipher(term: 1)

        _ = try vault.rotate(reencrypt: false)
        try vault.items.add([item(account: "new", secret: "under term 2")])
        #expect(try vault.rotate(reencrypt: true) == 3)
        #expect(vault.waitForReencryption()?.state == .finished)
        let stored = try vault.sqlitePool!.read { db in try db.query("SELECT term FROM keyring ORDER BY term") { $0.int64(0) } }
        #expect(stored == [3])
        #expect(vault.keyring.terms == [3] && vault.status.termCount == 1)
        #expect(try vault.keyring.cipher(term: 1) == nil)
        #expect(retiredCipher == nil, "the retired term's key is released (and so wiped)")
        #expect(try vault.items.find(everything, limit: nil, after: nil, reading: .all).items.count == 31)
        // Reopened from disk, the keyring has the one term left.
        vault.close()
        let reopened = try fixture.dataDirectory.open(logger: quietLogger)
        #expect(reopened.keyring.terms == [3])
        #expect(try reopened.items.find(everything, limit: nil, after: nil, reading: .all).items.count == 31)
        reopened.close()

        let target = DataDirectory(path: scratch.path + "/restored")
        let report = try target.restore(
            from: backup, masterKeyFile: fixture.dataDirectory.masterKeyPath, force: false, logger: quietLogger)
        #expect(report.terms == 1 && report.items == 30)
        let restored = try target.open(logger: quietLogger)
        defer { restored.close() }
        let items = try restored.items.find(everything, limit: nil, after: nil, reading: .all).items
        #expect(items.count == 30 && items.first?.secret?.utf8String() == "secret-0")
    }
}
