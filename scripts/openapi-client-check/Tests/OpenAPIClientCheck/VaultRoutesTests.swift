import Foundation
import OpenAPIRuntime
import Testing

/// Key management through the generated client, in an operator's order: status, rotate with
/// re-encryption (a non-null `reencryption`), rekey, backup (a non-null `lastBackup`), lock (the
/// documented 503s, health's locked body), unlock (401 without the master key file); a secret
/// stored first still reads back.
@Suite struct VaultRoutesTests {
    @Test func rotateRekeyBackupLockUnlock() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let admin = server.admin
        _ = try await admin.addGenericPassword(
            body: .json(.GenericPasswordNewText(.init(account: "sentinel", service: "vault.example.com", value: "kept")))
        ).created

        let fresh = try await admin.vaultStatus().ok.body.json
        #expect(!fresh.locked && fresh.currentTerm == 1 && fresh.terms == 1 && fresh.currentTermEncryptions >= 1)
        #expect(fresh.reencryption == nil && fresh.lastBackup == nil && fresh.backupsCompleted == 0)

        let rotated = try await admin.rotateDataKey(query: .init(reencrypt: true)).ok.body.json
        #expect(rotated.term == 2 && rotated.reencrypting)
        var reencryption = try await admin.vaultStatus().ok.body.json.reencryption
        let deadline = Date().addingTimeInterval(20)
        while reencryption?.state == .running, Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
            reencryption = try await admin.vaultStatus().ok.body.json.reencryption
        }
        let finished = try #require(reencryption)
        #expect(finished.state == .finished && finished.targetTerm == 2 && finished.done == finished.total)
        // The re-encryption retired term 1 (no secret is sealed under it any more): one key to re-wrap.
        #expect(try await admin.rekeyVault().ok.body.json.rewrapped == 1)

        let backup = try await admin.backupDatabase().ok
        #expect(backup.headers.contentDisposition != nil && backup.headers.cacheControl == .noStore)
        let file = try await Data(collecting: try backup.body.binary, upTo: 64 << 20)
        #expect(file.starts(with: Data("KEYCHAIND-BACKUP".utf8)))
        let backedUp = try await admin.vaultStatus().ok.body.json
        #expect(backedUp.backupsCompleted == 1 && backedUp.currentTerm == 2 && backedUp.terms == 1)
        #expect(abs(try #require(backedUp.lastBackup).timeIntervalSinceNow) < 60)

        #expect(try await admin.lockVault().ok.body.json.locked)
        guard case .Health(let health) = try await server.client(token: nil).health().serviceUnavailable.body.json else {
            Issue.record("a locked vault's health answer is not Health")
            return
        }
        #expect(health.locked && health.status == .locked)
        let item = try await admin.findGenericPassword(query: .init(service: "vault.example.com"))
        expectError(try item.serviceUnavailable.body.json.answer, "errSecInteractionNotAllowed", -25308)
        let tokens = try await admin.getTokens(path: .init(service: "vault.example.com"))
        expectError(try tokens.serviceUnavailable.body.json.answer, "errSecInteractionNotAllowed", -25308)
        let rotate = try await admin.rotateDataKey()
        expectError(try rotate.serviceUnavailable.body.json.answer, "errSecInteractionNotAllowed", -25308)
        let rekey = try await admin.rekeyVault()
        expectError(try rekey.serviceUnavailable.body.json.answer, "errSecInteractionNotAllowed", -25308)
        #expect(try await admin.vaultStatus().ok.body.json.locked)
        #expect(try await admin.lockVault(body: .json(OpenAPIObjectContainer())).ok.body.json.locked)

        // Unlocking needs this vault's master key file: without it, 401 and still locked.
        let keyFile = server.dataDirectory.appendingPathComponent("master.key")
        let keyAway = server.dataDirectory.appendingPathComponent("master.key.away")
        try FileManager.default.moveItem(at: keyFile, to: keyAway)
        let noKey = try await admin.unlockVault()
        expectError(try noKey.unauthorized.body.json, "errSecAuthFailed", -25293)
        #expect(try await admin.vaultStatus().ok.body.json.locked)
        try FileManager.default.moveItem(at: keyAway, to: keyFile)
        #expect(try await admin.unlockVault().ok.body.json.locked == false)
        #expect(try await server.client(token: nil).health().ok.body.json.status == .ok)
        let sentinel = try #require(
            try await admin.findGenericPassword(query: .init(service: "vault.example.com", _return: "data")).ok.body.json.one)
        #expect(sentinel.value == "kept")
    }
}
