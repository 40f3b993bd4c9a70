import Foundation
import KeychaindTesting
import Synchronization
import Testing

/// Lock/unlock, rotate, rekey (with crashes at each step), backup under concurrent writes and
/// restore, scheduled backups: against the real binary over HTTP.
@Suite(.serialized)
struct VaultOperationsTests {
    /// A running server with an app client (group "app") whose token is `token`.
    struct Fixture {
        let server: KeychaindProcess
        let admin: String
        let token: String
        var http: HTTPTestClient { server.client() }

        init(environment: [String: String] = [:]) throws {
            server = try KeychaindProcess(environment: environment)
            admin = try server.adminToken()
            let created = try server.client().json(
                "POST", "/v1/admin/clients", ["name": "app", "accessGroups": ["app"]], token: admin)
            guard created.status == 201, let token = created.json["token"] as? String else {
                throw ProcessFailure(description: "cannot create a client: \(created.text)")
            }
            self.token = token
        }

        @discardableResult
        func add(_ account: String, _ secret: String) throws -> HTTPTestClient.Response {
            try http.json(
                "POST", "/v1/items/genericPassword", ["service": "svc", "account": account, "value": secret], token: token)
        }

        func read(_ account: String, on client: HTTPTestClient? = nil) throws -> HTTPTestClient.Response {
            try (client ?? http).send(
                "GET", "/v1/items/genericPassword?service=svc&account=\(account)&return=data", token: token)
        }

        func admin(_ method: String, _ path: String) throws -> HTTPTestClient.Response {
            try http.send(method, path, token: admin)
        }
    }

    /// Every secret under service "svc" visible to `token`, by account.
    static func allSecrets(_ client: HTTPTestClient, token: String) throws -> [String: String] {
        let response = try client.send(
            "GET", "/v1/items/genericPassword?service=svc&limit=all&return=attributes,data", token: token)
        guard response.status == 200 else { throw ProcessFailure(description: "search failed: \(response.text)") }
        var result: [String: String] = [:]
        for item in response.json["items"] as? [[String: Any]] ?? [] {
            if let account = item["account"] as? String { result[account] = item["value"] as? String }
        }
        return result
    }

    /// The temporary files of a backup (snapshot, sealed copy) still named in a data directory.
    static func backupLeftovers(in dataDir: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dataDir.path).filter { $0.hasPrefix(".backup-") }
    }

    static func runCommand(_ arguments: [String]) throws -> (status: Int32?, log: String) {
        let process = try KeychaindProcess(
            dataDir: URL(fileURLWithPath: "/nonexistent"), arguments: arguments, waitForListening: false)
        let status = process.waitForExit()
        return (status, process.log)
    }

    @Test func lockAnswers503UntilUnlockWhileAdminAuthKeepsWorking() throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        #expect(try fixture.add("a", "one").status == 201)

        let lock = try fixture.admin("POST", "/v1/admin/lock")
        #expect(lock.status == 200 && lock.json["locked"] as? Bool == true)

        let read = try fixture.read("a")
        #expect(read.status == 503)
        #expect(read.json["status"] as? Int == -25308)
        #expect(read.json["error"] as? String == "errSecInteractionNotAllowed")
        #expect(try fixture.add("b", "two").status == 503)
        #expect(try fixture.http.send("DELETE", "/v1/items/genericPassword?service=svc", token: fixture.token).status == 503)
        // The token routes sit on the same store, so they are locked too.
        for (method, path) in [("GET", "/v1/tokens/svc"), ("GET", "/v1/tokens/svc/authorization"), ("DELETE", "/v1/tokens/svc")] {
            #expect(try fixture.http.send(method, path, token: fixture.token).status == 503, "\(method) \(path)")
        }
        #expect(try fixture.http.json("PUT", "/v1/tokens/svc", ["accessToken": "t"], token: fixture.token).status == 503)

        let health = try fixture.http.send("GET", "/v1/health")
        #expect(health.status == 503)
        #expect(health.json["status"] as? String == "locked" && health.json["locked"] as? Bool == true)

        // Authentication needs no key: admin routes answer, bad tokens are still refused.
        #expect(try fixture.admin("GET", "/v1/admin/clients").status == 200)
        #expect(try fixture.http.send("POST", "/v1/admin/lock", token: "kc_bogus").status == 401)
        #expect(try fixture.http.send("POST", "/v1/admin/unlock", token: fixture.token).status == 403)
        #expect(try fixture.http.send("GET", "/v1/items/genericPassword?service=svc", token: "kc_bogus").status == 401)
        let status = try fixture.admin("GET", "/v1/admin/vault")
        #expect(status.status == 200 && status.json["locked"] as? Bool == true)
        #expect(try fixture.admin("POST", "/v1/admin/rotate").status == 503)
        #expect(try fixture.admin("POST", "/v1/admin/rekey").status == 503)

        let unlock = try fixture.admin("POST", "/v1/admin/unlock")
        #expect(unlock.status == 200 && unlock.json["locked"] as? Bool == false)
        #expect(try fixture.read("a").json["item"].flatMap { ($0 as? [String: Any])?["value"] as? String } == "one")
        #expect(try fixture.http.send("GET", "/v1/health").status == 200)
        #expect(fixture.server.logShows("keys dropped from memory"))
    }

    @Test func unlockWithAReplacedMasterKeyIs401AndStaysLocked() throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        try fixture.add("a", "one")
        let keyURL = fixture.server.dataDir.appendingPathComponent("master.key")
        let original = try Data(contentsOf: keyURL)
        #expect(try fixture.admin("POST", "/v1/admin/lock").status == 200)

        var wrong = Data(count: 32)
        for index in 0..<32 { wrong[index] = UInt8.random(in: 0...255) }
        try wrong.write(to: keyURL)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyURL.path)
        let refused = try fixture.admin("POST", "/v1/admin/unlock")
        #expect(refused.status == 401)
        #expect(refused.json["status"] as? Int == -25293)
        #expect(refused.json["error"] as? String == "errSecAuthFailed")
        #expect(try fixture.http.send("GET", "/v1/health").json["locked"] as? Bool == true)
        #expect(try fixture.read("a").status == 503)

        try original.write(to: keyURL)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyURL.path)
        #expect(try fixture.admin("POST", "/v1/admin/unlock").status == 200)
        #expect(try fixture.read("a").status == 200)
    }

    @Test func serveLockedStartsWithoutTheMasterKey() throws {
        let fixture = try Fixture()
        try fixture.add("a", "one")
        #expect(fixture.server.stop() == 0)
        let keyPath = fixture.server.dataDir.appendingPathComponent("master.key").path
        try FileManager.default.moveItem(atPath: keyPath, toPath: keyPath + ".offline")

        let locked = try KeychaindProcess(
            dataDir: fixture.server.dataDir,
            arguments: ["serve", "--locked", "--listen", "127.0.0.1:0", "--data-dir", fixture.server.dataDir.path])
        defer { locked.stop() }
        #expect(try locked.client().send("GET", "/v1/health").status == 503)
        #expect(try locked.client().send("POST", "/v1/admin/unlock", token: fixture.admin).status == 401)
        try FileManager.default.moveItem(atPath: keyPath + ".offline", toPath: keyPath)
        #expect(try locked.client().send("POST", "/v1/admin/unlock", token: fixture.admin).status == 200)
        #expect(try fixture.read("a", on: locked.client()).status == 200)

        // --locked on an uninitialised directory is refused.
        let empty = KeychaindProcess.temporaryDirectory().appendingPathComponent("data")
        let refused = try KeychaindProcess(
            dataDir: empty, arguments: ["serve", "--locked", "--listen", "127.0.0.1:0", "--data-dir", empty.path],
            waitForListening: false)
        #expect(refused.waitForExit() == 1)
        #expect(refused.log.contains("keychaind init"))
    }

    @Test func secondServerOnTheSameDirectoryIsRefused() throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let second = try KeychaindProcess(dataDir: fixture.server.dataDir, waitForListening: false)
        #expect(second.waitForExit() == 1)
        #expect(second.log.contains("in use"))
    }

    @Test func rotateThenRekeyThenRestartKeepsEverySecret() throws {
        let fixture = try Fixture()
        var expected: [String: String] = [:]
        func add(_ account: String) throws {
            let secret = "secret-\(account)-\(UUID().uuidString)"
            #expect(try fixture.add(account, secret).status == 201)
            expected[account] = secret
        }
        for n in 0..<5 { try add("before-\(n)") }
        let rotate = try fixture.admin("POST", "/v1/admin/rotate")
        #expect(rotate.status == 200 && rotate.json["status"] as? Int == 0 && rotate.json["term"] as? Int == 2)
        for n in 0..<5 { try add("term2-\(n)") }
        let keyURL = fixture.server.dataDir.appendingPathComponent("master.key")
        let keyBefore = try Data(contentsOf: keyURL)
        let rekey = try fixture.admin("POST", "/v1/admin/rekey")
        #expect(rekey.status == 200 && rekey.json["rewrapped"] as? Int == 2)
        #expect(try Data(contentsOf: keyURL) != keyBefore)
        for n in 0..<5 { try add("rekeyed-\(n)") }
        let reencrypt = try fixture.admin("POST", "/v1/admin/rotate?reencrypt=true")
        #expect(reencrypt.json["term"] as? Int == 3 && reencrypt.json["reencrypting"] as? Bool == true)
        for n in 0..<5 { try add("term3-\(n)") }
        #expect(try Self.allSecrets(fixture.http, token: fixture.token) == expected)
        var progress: [String: Any] = [:]
        #expect(try waitUntil {
            progress = try fixture.admin("GET", "/v1/admin/vault").json["reencryption"] as? [String: Any] ?? [:]
            return progress["state"] as? String == "finished"
        })
        #expect(progress["done"] as? Int == 15)
        #expect(fixture.server.stop() == 0)

        let restarted = try KeychaindProcess(dataDir: fixture.server.dataDir)
        defer { restarted.stop() }
        #expect(try Self.allSecrets(restarted.client(), token: fixture.token) == expected)
        let status = try restarted.client().send("GET", "/v1/admin/vault", token: fixture.admin).json
        // Terms 1 and 2 seal nothing after the re-encryption: retired.
        #expect(status["currentTerm"] as? Int == 3 && status["terms"] as? Int == 1)
    }

    #if KEYCHAIND_FAULT_INJECTION
    /// `KEYCHAIND_FAULT` makes the (debug) server `_exit(70)` at each step of the rekey; a restart
    /// without it opens the vault with every secret, and no half-done key file is left behind.
    @Test(arguments: ["rekey-after-new-key-file", "rekey-after-rewrap", "rekey-after-rename"])
    func rekeyCrashAtEachStepLosesNothing(point: String) throws {
        let fixture = try Fixture(environment: ["KEYCHAIND_FAULT": point])
        var expected: [String: String] = [:]
        for n in 0..<4 {
            expected["a\(n)"] = "secret-\(n)"
            #expect(try fixture.add("a\(n)", "secret-\(n)").status == 201)
        }
        #expect(try fixture.admin("POST", "/v1/admin/rotate").status == 200)
        expected["late"] = "after rotate"
        try fixture.add("late", "after rotate")
        let keyURL = fixture.server.dataDir.appendingPathComponent("master.key")
        let keyBefore = try Data(contentsOf: keyURL)

        #expect(throws: (any Error).self) { _ = try fixture.admin("POST", "/v1/admin/rekey") }
        #expect(fixture.server.waitForExit() == 70)
        #expect(fixture.server.log.contains("fault injection armed"))
        let pending = fixture.server.dataDir.appendingPathComponent("master.key.new").path
        #expect(FileManager.default.fileExists(atPath: pending) == (point != "rekey-after-rename"))

        let restarted = try KeychaindProcess(dataDir: fixture.server.dataDir)
        defer { restarted.stop() }
        #expect(try Self.allSecrets(restarted.client(), token: fixture.token) == expected)
        #expect(!FileManager.default.fileExists(atPath: pending))
        #expect((try Data(contentsOf: keyURL) == keyBefore) == (point == "rekey-after-new-key-file"))
        // The vault keeps working, and rekeys again cleanly.
        #expect(try restarted.client().send("POST", "/v1/admin/rekey", token: fixture.admin).status == 200)
        #expect(try Self.allSecrets(restarted.client(), token: fixture.token) == expected)
    }
    #endif

    /// Three writers add items over HTTP while a backup is taken; the sealed backup, restored
    /// with `keychaind restore --master-key` into a fresh directory, passes integrity_check and holds every item
    /// acknowledged before the backup was requested, served by a fresh `keychaind serve`.
    @Test func backupDuringConcurrentWritesRestoresEveryAcknowledgedItem() throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        for n in 0..<20 { try fixture.add("seed-\(n)", "seed-secret-\(n)") }

        let acknowledged = Mutex<[(account: String, secret: String, at: Date)]>([])
        let failures = Mutex<[String]>([])
        let stop = Atomic<Bool>(false)
        let finished = DispatchGroup()
        for writer in 0..<3 {
            finished.enter()
            Thread {
                defer { finished.leave() }
                var n = 0
                while !stop.load(ordering: .relaxed) && n < 400 {
                    n += 1
                    let account = "w\(writer)-\(n)"
                    let secret = "secret-\(account)-\(UUID().uuidString)"
                    do {
                        let response = try fixture.add(account, secret)
                        if response.status == 201 {
                            acknowledged.withLock { $0.append((account, secret, Date())) }
                        } else {
                            failures.withLock { $0.append("\(response.status) \(response.text)") }
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }.start()
        }
        defer {  // the writers are joined on every path, a throwing one too
            stop.store(true, ordering: .relaxed)
            finished.wait()
        }
        // Let the writers get going, then back up while they write.
        try #require(
            waitUntil { acknowledged.withLock { $0.count } >= 30 }, "the writers get going: \(failures.withLock { $0 }.prefix(3))")
        let requested = Date()
        let backup = try fixture.admin("GET", "/v1/admin/backup")
        let answered = Date()
        let writtenDuringBackup = acknowledged.withLock { $0.filter { $0.at >= requested }.count }
        // And they carry on after it (unless all their writes are done already).
        #expect(waitUntil {
            acknowledged.withLock { $0.contains { $0.at >= answered } } || finished.wait(timeout: .now()) == .success
        })
        stop.store(true, ordering: .relaxed)
        finished.wait()
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(3))")
        #expect(backup.status == 200)
        #expect(backup.headers["content-type"] == "application/octet-stream")
        #expect(backup.body.prefix(16) == Data("KEYCHAIND-BACKUP".utf8))
        #expect(try Self.backupLeftovers(in: fixture.server.dataDir).isEmpty)
        let all = acknowledged.withLock { $0 }
        print("backup: \(backup.body.count) bytes; \(all.count) items acknowledged, \(writtenDuringBackup) during the backup")

        let scratch = KeychaindProcess.temporaryDirectory()
        let backupFile = scratch.appendingPathComponent("keychaind.backup")
        try backup.body.write(to: backupFile)
        let restoredDir = scratch.appendingPathComponent("restored")
        // The backup holds no master key and opens only with the one it was made under.
        let masterKey = fixture.server.dataDir.appendingPathComponent("master.key").path
        let restore = try Self.runCommand([
            "restore", "--from", backupFile.path, "--master-key", masterKey, "--data-dir", restoredDir.path,
        ])
        #expect(restore.status == 0, "\(restore.log)")
        #expect(restore.log.contains("installed \(masterKey)"))
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") {
            let check = Process()
            check.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
            check.arguments = [restoredDir.appendingPathComponent("keychain.db").path, "PRAGMA integrity_check;"]
            let pipe = Pipe()
            check.standardOutput = pipe
            try check.run()
            check.waitUntilExit()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
        }
        let restored = try KeychaindProcess(dataDir: restoredDir)
        defer { restored.stop() }
        let secrets = try Self.allSecrets(restored.client(), token: fixture.token)
        for n in 0..<20 { #expect(secrets["seed-\(n)"] == "seed-secret-\(n)") }
        let before = all.filter { $0.at < requested }
        #expect(before.count >= 30)
        for item in before { #expect(secrets[item.account] == item.secret, "\(item.account) missing from the backup") }
        // Nothing in the backup that was not written (and every secret opens: the values match).
        let known = Dictionary(uniqueKeysWithValues: all.map { ($0.account, $0.secret) })
        for (account, secret) in secrets where !account.hasPrefix("seed-") { #expect(known[account] == secret) }
    }

    @Test func restoreIsRefusedWhileAServerRunsAndWithoutForce() throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        try fixture.add("a", "one")
        let backup = try fixture.admin("GET", "/v1/admin/backup")
        let scratch = KeychaindProcess.temporaryDirectory()
        let file = scratch.appendingPathComponent("b.backup")
        try backup.body.write(to: file)
        let dataDir = fixture.server.dataDir.path
        let running = try Self.runCommand(["restore", "--from", file.path, "--data-dir", dataDir, "--force"])
        #expect(running.status == 1 && running.log.contains("in use"))
        #expect(fixture.server.stop() == 0)
        let existing = try Self.runCommand(["restore", "--from", file.path, "--data-dir", dataDir])
        #expect(existing.status == 1 && existing.log.contains("--force"))
        let junk = scratch.appendingPathComponent("junk.db")
        try Data("not a database".utf8).write(to: junk)
        let bad = try Self.runCommand(["restore", "--from", junk.path, "--data-dir", dataDir, "--force"])
        #expect(bad.status == 1 && bad.log.contains("not a sealed keychaind backup"), "\(bad.log)")
        let forced = try Self.runCommand(["restore", "--from", file.path, "--data-dir", dataDir, "--force"])
        #expect(forced.status == 0 && forced.log.contains("opens the restored keyring"), "\(forced.log)")
        let again = try KeychaindProcess(dataDir: fixture.server.dataDir)
        defer { again.stop() }
        #expect(try Self.allSecrets(again.client(), token: fixture.token) == ["a": "one"])
    }

    @Test func scheduledBackupsAreWrittenAndPruned() throws {
        let fixture = try Fixture(environment: ["KEYCHAIND_BACKUP_INTERVAL": "1", "KEYCHAIND_BACKUP_KEEP": "2"])
        defer { fixture.server.stop() }
        try fixture.add("a", "one")
        let directory = fixture.server.dataDir.appendingPathComponent("backups")
        // The interval is a second of the server's clock: three backups take three seconds.
        #expect(waitUntil { fixture.server.log.components(separatedBy: "scheduled backup written").count > 3 })
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".backup") }
        #expect(names.count == 2, "\(names)")
        #expect(names.allSatisfy { $0.hasPrefix("keychain-") })
    }
}
