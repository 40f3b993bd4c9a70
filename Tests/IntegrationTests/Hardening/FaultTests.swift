import Foundation
import KeychaindTesting
import Testing

/// Issue 9, faults: `kill -9` during concurrent writes, and a full disk.
@Suite(.serialized)
final class FaultTests {
    /// What one account may hold after a crash: its acknowledged state, or the state its one
    /// unacknowledged request (if any) would have left. nil = absent.
    struct Expectation {
        var acknowledged: String?
        var pending: [String?] = []
        var allowed: [String?] { [acknowledged] + pending }
    }

    @Test func killNineDuringConcurrentWritesLosesNothingAcknowledged() throws {
        try killNineRounds(threads: 16)
    }

    /// The same with more writers than the server has workers and more workers than cores, so
    /// that writes are committed in batches of many (group commit): the kill lands while batches
    /// are in flight, and no write of a batch is acknowledged before its commit.
    @Test func killNineDuringBatchedWritesLosesNothingAcknowledged() throws {
        let largest = try killNineRounds(threads: 48, environment: ["KEYCHAIND_THREADS": "16"])
        #expect(largest > 1, "no batch carried more than one write")
    }

    /// Rounds of `threads` writers against a server started with `environment`, each ended by a
    /// `kill -9` at a random moment; after each restart, every acknowledged write is there.
    /// Returns the largest mean batch size (writes per commit) a round reached before its kill.
    @discardableResult
    private func killNineRounds(threads: Int, environment: [String: String] = [:]) throws -> Double {
        let rounds = Hardening.count(ci: 5, full: 50)
        var largestMeanBatch = 0.0
        let dataDir = KeychaindProcess.temporaryDirectory().appendingPathComponent("data")
        var token = ""
        let model = Locked([String: Expectation]())
        var totals = (acknowledged: 0, unacknowledged: 0, items: 0)
        for round in 0..<rounds {
            let server = try KeychaindProcess(dataDir: dataDir, environment: environment)
            defer { server.stop() }
            if round == 0 { token = try server.newClientToken("crash", groups: ["crash"]) }
            // After the previous kill: every acknowledged write is there, intact; nothing else.
            let verified = try Self.verify(server, token: token, model: model)
            totals.items = verified
            let port = server.port
            let stop = Locked(false)
            let counts = Locked((acknowledged: 0, unacknowledged: 0))
            let roundToken = token
            let failures = Locked([String]())
            // When the kill comes is the point: anywhere in the writes, drawn afresh each round.
            let killAfter = Double.random(in: 0.3...1.2)
            let admin = try server.adminToken()
            let meanBatch = Locked(0.0)
            let killer = WorkerThread(name: "killer") {
                Thread.sleep(forTimeInterval: killAfter)
                meanBatch.withLock { $0 = Self.meanBatchSize(port: port, admin: admin) }
                stop.withLock { $0 = true }
                kill(server.pid, SIGKILL)
            }
            Hardening.concurrently(threads) { thread in
                let http = HTTPTestClient(port: port)
                var sequence = 0
                var mine: [String] = model.withLock { $0.keys.filter { $0.hasPrefix("t\(thread)-") } }
                while !stop.withLock({ $0 }) {
                    sequence += 1
                    let roll = Int.random(in: 0..<10)
                    let value = "r\(round)-s\(sequence)-" + String(repeating: "x", count: Int.random(in: 1...2000))
                    var account: String
                    var method: String, path: String, body: [String: Any]?, newState: String?
                    if roll < 6 || mine.isEmpty {
                        account = "t\(thread)-r\(round)-s\(sequence)"
                        (method, path, body, newState) = ("POST", "/v1/items/genericPassword",
                                                          ["service": "crash", "account": account, "value": value], value)
                    } else if roll < 9 {
                        account = mine.randomElement()!
                        (method, path, body, newState) = ("PATCH", "/v1/items/genericPassword?service=crash&account=\(account)",
                                                          ["value": value], value)
                    } else {
                        account = mine.randomElement()!
                        (method, path, body, newState) = ("DELETE", "/v1/items/genericPassword?service=crash&account=\(account)", nil, nil)
                    }
                    model.withLock { $0[account, default: Expectation()].pending = [newState] }
                    do {
                        let answer = try body.map { try http.json(method, path, $0, token: roundToken) }
                            ?? http.send(method, path, token: roundToken)
                        guard (200..<300).contains(answer.status) else {
                            failures.withLock { $0.append("\(method) \(account) answered \(answer.status): \(answer.text)") }
                            return
                        }
                        model.withLock { $0[account] = Expectation(acknowledged: newState) }
                        counts.withLock { $0.acknowledged += 1 }
                        if method == "POST" { mine.append(account) }
                        if method == "DELETE" { mine.removeAll { $0 == account } }
                    } catch {
                        counts.withLock { $0.unacknowledged += 1 }
                        return  // the server is gone; this account keeps its pending state
                    }
                }
            }
            _ = server.waitForExit(timeout: 10)
            killer.join()
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(3))")
            let (acknowledged, unacknowledged) = counts.withLock { ($0.acknowledged, $0.unacknowledged) }
            totals.acknowledged += acknowledged
            totals.unacknowledged += unacknowledged
            // The file after the crash, before any recovery by keychaind.
            let check = try Command.run(["sqlite3", dataDir.appendingPathComponent("keychain.db").path, "PRAGMA integrity_check;"])
            #expect(check.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "ok", "round \(round): \(check.stdout) \(check.stderr)")
            let mean = meanBatch.withLock { $0 }
            largestMeanBatch = max(largestMeanBatch, mean)
            Hardening.report("kill -9 round \(round + 1)/\(rounds) at \(String(format: "%.2f", killAfter)) s: \(acknowledged) acknowledged writes, \(unacknowledged) cut off, \(String(format: "%.1f", mean)) writes per commit, integrity_check \(check.stdout.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        let server = try KeychaindProcess(dataDir: dataDir, environment: environment)
        defer { server.stop() }
        totals.items = try Self.verify(server, token: token, model: model)
        Hardening.report("kill -9: \(rounds) rounds x \(threads) threads: \(totals.acknowledged) acknowledged writes all present and intact, \(totals.unacknowledged) unacknowledged each all-or-nothing, \(totals.items) items at the end")
        try? FileManager.default.removeItem(at: dataDir.deletingLastPathComponent())
        return largestMeanBatch
    }

    /// Writes per commit so far (`keychaind_storage_commit_batch_size` sum over count), 0 when
    /// the server does not answer.
    static func meanBatchSize(port: UInt16, admin: String) -> Double {
        guard let answer = try? HTTPTestClient(port: port).send("GET", "/v1/metrics", token: admin), answer.status == 200
        else { return 0 }
        let commits = answer.sample("keychaind_storage_commit_batch_size_count") ?? 0
        return commits > 0 ? (answer.sample("keychaind_storage_commit_batch_size_sum") ?? 0) / commits : 0
    }

    /// Compares the stored items with the model and settles it (pending → what is there).
    static func verify(_ server: KeychaindProcess, token: String, model: Locked<[String: Expectation]>) throws -> Int {
        var stored: [String: String] = [:]
        var cursor: String?
        repeat {
            let page = cursor.map { "&cursor=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)" } ?? ""
            let answer = try server.client().send(
                "GET", "/v1/items/genericPassword?service=crash&limit=all&return=attributes,data\(page)", token: token)
            guard answer.status == 200 else {
                #expect(answer.status == 404, "\(answer.status)")
                break
            }
            for item in answer.json["items"] as? [[String: Any]] ?? [] {
                stored[item["account"] as? String ?? "?"] = item["value"] as? String ?? "<not text>"
            }
            cursor = answer.json["next"] as? String
        } while cursor != nil
        model.withLock { model in
            for (account, value) in stored where model[account] == nil {
                Issue.record("\(account) is stored but was never written (value \(value.prefix(20)))")
            }
            for (account, expectation) in model {
                let actual = stored[account]
                let ok = expectation.allowed.contains(actual)
                #expect(ok, "\(account): stored \(actual.map { "\($0.count) bytes \($0.prefix(12))" } ?? "nothing"), acknowledged \(expectation.acknowledged.map { "\($0.count) bytes \($0.prefix(12))" } ?? "nothing")")
                model[account] = actual == nil ? nil : Expectation(acknowledged: actual)
            }
        }
        return stored.count
    }

    @Test func aFullDiskRefusesWritesCleanlyKeepsReadsAndRecovers() throws {
        guard getuid() == 0 else {
            print("hardening: disk-full test skipped: needs root to mount a tmpfs")
            return
        }
        let mountPoint = KeychaindProcess.temporaryDirectory()
        let mounted = try Command.run(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", mountPoint.path])
        guard mounted.status == 0 else {
            print("hardening: disk-full test skipped: cannot mount a tmpfs (\(mounted.stderr.trimmingCharacters(in: .whitespacesAndNewlines)))")
            return
        }
        defer {
            _ = try? Command.run(["umount", mountPoint.path])
            if (try? Command.run(["mountpoint", "-q", mountPoint.path]))?.status == 0 {
                _ = try? Command.run(["umount", "-l", mountPoint.path])
            }
            try? FileManager.default.removeItem(at: mountPoint)
        }
        let server = try KeychaindProcess(dataDir: mountPoint.appendingPathComponent("data"))
        defer { server.stop() }
        let http = server.client()
        let token = try server.newClientToken("disk", groups: ["disk"])
        #expect(try http.json("POST", "/v1/items/genericPassword", ["service": "disk", "account": "before", "value": "kept"], token: token).status == 201)
        // Fill the file system but for a little.
        let filler = mountPoint.appendingPathComponent("filler")
        _ = try Command.run(["dd", "if=/dev/zero", "of=\(filler.path)", "bs=64k", "count=76"])
        var refusals: [Int: Int] = [:]
        var added = 0
        let big = String(repeating: "z", count: 100_000)
        for index in 0..<200 {
            let answer = try http.json("POST", "/v1/items/genericPassword", ["service": "disk", "account": "fill\(index)", "value": big], token: token)
            if answer.status == 201 {
                added += 1
                continue
            }
            let status = answer.json["status"] as? Int ?? 0
            refusals[status, default: 0] += 1
            #expect((answer.status == 507 && status == -34) || (answer.status == 500 && status == -36), "\(answer.status) \(answer.text)")
            if refusals.values.reduce(0, +) >= 5 { break }
        }
        #expect(!refusals.isEmpty, "the disk never filled")
        // Reads keep working.
        let read = try http.send("GET", "/v1/items/genericPassword?service=disk&account=before&return=data", token: token)
        #expect(read.status == 200 && (read.json["item"] as? [String: Any])?["value"] as? String == "kept", "\(read.text)")
        #expect(try http.send("GET", "/health").status == 200)
        // Space back: writes work again.
        try FileManager.default.removeItem(at: filler)
        let after = try http.json("POST", "/v1/items/genericPassword", ["service": "disk", "account": "after", "value": "ok"], token: token)
        #expect(after.status == 201, "\(after.text)")
        Hardening.report("disk full (6 MiB tmpfs): \(added) large writes fit, then refusals by status \(refusals.sorted { $0.key < $1.key }); reads kept working; after freeing space a write answered \(after.status)")
        server.stop()
        let check = try Command.run(["sqlite3", mountPoint.appendingPathComponent("data/keychain.db").path, "PRAGMA integrity_check;"])
        #expect(check.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
    }
}
