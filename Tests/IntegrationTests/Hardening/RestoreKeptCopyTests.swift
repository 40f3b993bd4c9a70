import Foundation
import Testing

/// Forced restores in one second (issue 40, finding 12): each kept the database it replaced as
/// `keychain.db.replaced-<second>`, renamed over any file of that name, so a second restore within
/// the second destroyed the copy the first one kept. Against the real binary.
@Suite(.serialized)
struct RestoreKeptCopyTests {
    @Test func forcedRestoresInOneSecondEachKeepTheDatabaseTheyReplaced() throws {
        let fixture = try VaultOperationsTests.Fixture()
        defer { fixture.server.stop() }
        let scratch = KeychaindProcess.temporaryDirectory()
        var backups: [(file: URL, secrets: [String: String])] = []
        for account in ["a", "b"] {
            #expect(try fixture.add(account, "\(account)-secret").status == 201)
            let backup = try fixture.admin("GET", "/v1/admin/backup")
            #expect(backup.status == 200)
            let file = scratch.appendingPathComponent("\(account).backup")
            try backup.body.write(to: file)
            backups.append((file, try VaultOperationsTests.allSecrets(fixture.http, token: fixture.token)))
        }
        #expect(try fixture.add("c", "c-secret").status == 201)
        var live = try VaultOperationsTests.allSecrets(fixture.http, token: fixture.token)
        #expect(fixture.server.stop() == 0)

        // Restore the two backups in turn (each replacing a database unlike the one before) until
        // two restores in a row kept their database in the same second.
        let dataDir = fixture.server.dataDir
        var kept: [(path: String, secrets: [String: String])] = []
        func second(_ keptPath: String) -> Substring {
            keptPath.split(separator: "replaced-").last?.prefix("YYYYMMDDTHHMMSSZ".count) ?? ""
        }
        for round in 0..<8 {
            let backup = backups[round % 2]
            let restore = try VaultOperationsTests.runCommand([
                "restore", "--from", backup.file.path, "--data-dir", dataDir.path, "--force",
            ])
            try #require(restore.status == 0, "\(restore.log)")
            let line = try #require(
                restore.log.split(separator: "\n").first { $0.hasPrefix("the previous database is kept as ") },
                "\(restore.log)")
            kept.append((String(line.dropFirst("the previous database is kept as ".count)), live))
            live = backup.secrets
            if kept.count >= 2 && second(kept[kept.count - 1].path) == second(kept[kept.count - 2].path) { break }
        }
        let last = kept.suffix(2).map(\.path)
        try #require(second(last[0]) == second(last[1]), "no two restores in a row fell in one second: \(kept.map(\.path))")
        #expect(Set(kept.map(\.path)).count == kept.count, "a kept name was used twice: \(kept.map(\.path))")

        // Every kept copy holds the database it replaced: serve a copy of it.
        let masterKey = dataDir.appendingPathComponent("master.key")
        for (path, secrets) in kept {
            let copy = KeychaindProcess.temporaryDirectory().appendingPathComponent("data")
            try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: masterKey, to: copy.appendingPathComponent("master.key"))
            try FileManager.default.copyItem(atPath: path, toPath: copy.appendingPathComponent("keychain.db").path)
            if FileManager.default.fileExists(atPath: path + "-wal") {
                try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy.appendingPathComponent("keychain.db-wal").path)
            }
            let server = try KeychaindProcess(dataDir: copy)
            defer { server.stop() }
            #expect(try VaultOperationsTests.allSecrets(server.client(), token: fixture.token) == secrets, "\(path)")
        }
        let restored = try KeychaindProcess(dataDir: dataDir)
        #expect(try VaultOperationsTests.allSecrets(restored.client(), token: fixture.token) == live)
        #expect(restored.stop() == 0)

        for name in try FileManager.default.contentsOfDirectory(atPath: dataDir.path) {
            let attributes = try FileManager.default.attributesOfItem(atPath: dataDir.appendingPathComponent(name).path)
            guard attributes[.type] as? FileAttributeType == .typeRegular else { continue }
            #expect(attributes[.posixPermissions] as? Int == 0o600, "\(name) is not 0600")
        }
    }
}
