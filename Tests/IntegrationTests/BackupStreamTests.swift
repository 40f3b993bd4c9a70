import Foundation
import Testing

/// `GET /v1/admin/backup` is sent from the sealed file: the server's peak memory does not grow
/// with the backup's size, and what it sent restores.
@Suite(.serialized)
struct BackupStreamTests {
    static let secretBytes = 512 * 1024
    static let itemCount = 100

    static func secret(_ n: Int) -> String {
        "secret-\(n)-" + String(repeating: Character(UnicodeScalar(UInt8(97 + n % 26))), count: secretBytes)
    }

    @Test func aLargeBackupIsStreamedFromTheFileAndRestores() throws {
        let fixture = try VaultOperationsTests.Fixture()
        defer { fixture.server.stop() }
        for n in 0..<Self.itemCount {
            let added = try fixture.add("big-\(n)", Self.secret(n))
            try #require(added.status == 201, "\(added.text)")
        }
        let pid = fixture.server.process.processIdentifier
        let peakBefore = Hardening.peakRSSKiB(pid)
        let backup = try fixture.admin("GET", "/v1/admin/backup")
        let peakAfter = Hardening.peakRSSKiB(pid)
        try #require(backup.status == 200)
        #expect(backup.headers["content-length"] == "\(backup.body.count)")
        #expect(backup.body.prefix(16) == Data("KEYCHAIND-BACKUP".utf8))
        let backupKiB = backup.body.count / 1024
        let growthKiB = peakAfter - peakBefore
        print("backup: \(backupKiB) KiB sent; server peak resident \(peakBefore) -> \(peakAfter) KiB (+\(growthKiB))")
        #expect(backupKiB >= Self.itemCount * Self.secretBytes / 1024)
        #expect(peakBefore > 0 && growthKiB < backupKiB / 3, "peak grew by \(growthKiB) KiB for a \(backupKiB) KiB backup")
        #expect(try VaultOperationsTests.backupLeftovers(in: fixture.server.dataDir).isEmpty)

        let scratch = KeychaindProcess.temporaryDirectory()
        let backupFile = scratch.appendingPathComponent("keychaind.backup")
        try backup.body.write(to: backupFile)
        let restoredDir = scratch.appendingPathComponent("restored")
        let masterKey = fixture.server.dataDir.appendingPathComponent("master.key").path
        let restore = try VaultOperationsTests.runCommand([
            "restore", "--from", backupFile.path, "--master-key", masterKey, "--data-dir", restoredDir.path,
        ])
        try #require(restore.status == 0, "\(restore.log)")
        let restored = try KeychaindProcess(dataDir: restoredDir)
        defer { restored.stop() }
        let client = restored.client()
        for n in [0, Self.itemCount / 2, Self.itemCount - 1] {
            let read = try fixture.read("big-\(n)", on: client)
            let value = read.json["item"].flatMap { ($0 as? [String: Any])?["value"] as? String }
            #expect(read.status == 200 && value == Self.secret(n), "big-\(n)")
        }
    }
}
