import Foundation
import KeychainTestSupport
import KeychaindTesting
import Testing

/// Issue 31, faults of a cluster on PostgreSQL: a node killed with `kill -9` under write load,
/// PostgreSQL itself restarted under write load (a cluster of the test's own), restarted under
/// an idle node, and frozen. Writes go through `RetryingWriteLoad` (clients that send a write
/// again to another node when theirs does not answer); afterwards every acknowledged write is there.
@Suite(.serialized)
final class ClusterFaultTests {
    /// 20 rounds: writers on three nodes, one node killed with SIGKILL at a random moment, the
    /// writes going on through the other two, the node started again; then every write
    /// acknowledged in the round is read back through the restarted node.
    @Test func killNineOfOneNodeUnderWriteLoadLosesNoAcknowledgedWrite() throws {
        let cluster = try PGCluster(postgres: try ThrowawayPostgres.shared(), nodes: 3)
        defer { cluster.stopAll() }
        let token = try cluster.newClientToken("load", groups: ["load"], on: 0)
        var loads: [RetryingWriteLoad] = []
        var acknowledged: [Int] = []
        var totals = RetryingWriteLoad.Counts()
        let started = ContinuousClock.now

        for round in 0..<20 {
            let victim = round % 3
            let load = RetryingWriteLoad(service: "kill\(round)", token: token, ports: cluster.nodes.map(\.port))
            loads.append(load)
            let workers = load.start(threads: 4)
            defer { load.stop(workers) }
            let flowing = waitUntil(timeout: 10) { load.counts.withLock { $0.acknowledged } >= 5 }
            #expect(flowing, "round \(round): no writes acknowledged before the kill")
            // The moment of the kill is the point: anywhere in the writes, drawn afresh each round.
            usleep(UInt32.random(in: 20_000...200_000))
            let killedAt = load.counts.withLock { $0.acknowledged }
            kill(cluster.node(victim).pid, SIGKILL)
            #expect(cluster.node(victim).waitForExit(timeout: 10) != nil, "round \(round): node \(victim) survived SIGKILL")
            // The writes go on through the other nodes while it is down...
            let continued = waitUntil(timeout: 10) { load.counts.withLock { $0.acknowledged } >= killedAt + 10 }
            #expect(continued, "round \(round): writes stopped with node \(victim) killed")
            // ...and after it is back, through it as well.
            try cluster.restart(victim)
            load.setPort(victim, cluster.node(victim).port)
            let restartedAt = load.counts.withLock { $0.acknowledged }
            #expect(waitUntil(timeout: 10) { load.counts.withLock { $0.acknowledged } >= restartedAt + 10 })
            load.stop(workers)

            let counts = load.counts.withLock { $0 }
            let failures = load.failures.withLock { $0 }
            #expect(failures.isEmpty, "round \(round): \(failures.prefix(3))")
            #expect(counts.unresolved == 0, "round \(round): \(counts.unresolved) writes never answered")
            let check = try load.verify(through: cluster.client(victim))
            #expect(check.lost.isEmpty, "round \(round): \(check.lost.count) acknowledged writes lost: \(check.lost.prefix(5))")
            #expect(check.unexplained.isEmpty, "round \(round): \(check.unexplained.prefix(5))")
            acknowledged.append(counts.acknowledged)
            totals.acknowledged += counts.acknowledged
            totals.retried += counts.retried
            totals.committedUnanswered += counts.committedUnanswered
        }
        // At the end, every round's writes again, through another node each.
        var lost = 0
        var stored = 0
        for (round, load) in loads.enumerated() {
            let check = try load.verify(through: cluster.client((round + 1) % 3))
            lost += check.lost.count + check.unexplained.count
            stored += check.stored
        }
        #expect(lost == 0)
        clusterReport(
            "kill -9: 20 rounds in \(String(format: "%.1f", secondsSince(started))) s, acknowledged writes per round \(acknowledged) "
                + "(\(totals.acknowledged) in all, \(stored) items stored, \(lost) lost), \(totals.retried) attempts sent again "
                + "to another node, \(totals.committedUnanswered) cut off after their commit")
    }

    /// PostgreSQL stopped under write load (a fast shutdown, then a crash: `-m immediate`) and
    /// started again on the same port and data: while it is down every node's health answers 503
    /// `unavailable` and requests answer 503 errSecIO within the configured timeouts (no hang,
    /// no crash, no thread pile-up); once it is back every node serves again by itself, without
    /// a restart; and no acknowledged write is lost.
    @Test func postgresRestartUnderWriteLoadLosesNothingAndNodesRecoverByThemselves() throws {
        let postgres = try ThrowawayPostgres.standalone()
        defer { postgres.stop() }
        let timeouts = (connect: 1.0, statement: 2.0)
        let cluster = try PGCluster(
            postgres: postgres, nodes: 2,
            environment: [
                "KEYCHAIND_STORAGE_POSTGRESQL_CONNECT_TIMEOUT_SECONDS": "\(Int(timeouts.connect))",
                "KEYCHAIND_STORAGE_POSTGRESQL_STATEMENT_TIMEOUT_SECONDS": "\(Int(timeouts.statement))",
            ])
        defer { cluster.stopAll() }
        let token = try cluster.newClientToken("load", groups: ["load"], on: 0)
        let threadsBefore = cluster.nodes.map { Self.threadCount($0.pid) }

        for (cycle, mode) in ["fast", "immediate"].enumerated() {
            let load = RetryingWriteLoad(service: "pg\(cycle)", token: token, ports: cluster.nodes.map(\.port), retryDeadline: 30)
            let workers = load.start(threads: 4)
            defer { load.stop(workers) }
            #expect(waitUntil(timeout: 10) { load.counts.withLock { $0.acknowledged } >= 20 }, "\(mode): no writes before the stop")

            try postgres.stopServer(mode: mode)
            let down = ContinuousClock.now
            var toUnavailable = 0.0
            for index in 0..<2 {
                var last: (status: Int, json: [String: Any]) = (0, [:])
                let noticed = waitUntil(timeout: 3) {
                    last = cluster.client(index).health()
                    let storage = last.json["storage"] as? [String: Any]
                    return last.status == 503 && last.json["status"] as? String == "unavailable"
                        && storage?["reachable"] as? Bool == false
                }
                #expect(noticed, "\(mode): node \(index) health while PostgreSQL is down: \(last)")
                toUnavailable = max(toUnavailable, secondsSince(down))
            }
            // Requests answer errSecIO at once, bounded by the configured timeouts, on every node.
            var slowestProbe = 0.0
            for index in 0..<2 {
                for probe in 0..<6 {
                    let start = ContinuousClock.now
                    let answer = try probe % 2 == 0
                        ? cluster.client(index).send("GET", "/v1/items/genericPassword?service=pg\(cycle)&limit=all", token: token)
                        : cluster.client(index).json(
                            "POST", "/v1/items/genericPassword", ["service": "probe", "account": "p\(cycle)-\(index)-\(probe)", "value": "x"],
                            token: token)
                    let took = secondsSince(start)
                    slowestProbe = max(slowestProbe, took)
                    #expect(answer.status == 503 && answer.json["error"] as? String == "errSecIO", "\(mode): \(answer.status) \(answer.text)")
                    #expect(took < timeouts.connect + timeouts.statement, "\(mode): a request took \(took) s with PostgreSQL down")
                }
                // A token this node may never have looked up: unavailable, not refused.
                let admin = try cluster.client(index).send("GET", "/v1/admin/clients", token: cluster.adminToken)
                #expect(admin.status == 503 && admin.json["error"] as? String == "errSecIO", "\(mode): \(admin.status) \(admin.text)")
            }
            for (index, node) in cluster.nodes.enumerated() {
                #expect(node.process.isRunning, "\(mode): node \(index) exited while PostgreSQL was down:\n\(node.log.suffix(2000))")
                let threads = Self.threadCount(node.pid)
                #expect(threads <= threadsBefore[index] + 8, "\(mode): node \(index) has \(threads) threads, \(threadsBefore[index]) before")
            }

            try postgres.startServer()
            let up = ContinuousClock.now
            var toRecovered = 0.0
            for index in 0..<2 {
                #expect(waitUntil(timeout: 15) { cluster.client(index).health().status == 200 }, "\(mode): node \(index) did not recover")
                toRecovered = max(toRecovered, secondsSince(up))
            }
            // Every request succeeds again on every node, first ones included.
            for index in 0..<2 {
                for attempt in 0..<12 {
                    let status = try cluster.client(index).add(
                        service: "after", account: "c\(cycle)-n\(index)-\(attempt)", value: "ok", token: token)
                    #expect(status == 201, "\(mode): write \(attempt) on node \(index) after recovery answered \(status)")
                }
            }
            let resumed = load.counts.withLock { $0.acknowledged }
            #expect(waitUntil(timeout: 10) { load.counts.withLock { $0.acknowledged } >= resumed + 20 }, "\(mode): the load did not resume")
            load.stop(workers)

            let counts = load.counts.withLock { $0 }
            #expect(load.failures.withLock { $0 }.isEmpty, "\(mode): \(load.failures.withLock { $0 }.prefix(3))")
            #expect(counts.unresolved == 0, "\(mode): \(counts.unresolved) writes never answered")
            let check = try load.verify(through: cluster.client(cycle % 2))
            #expect(check.lost.isEmpty, "\(mode): \(check.lost.count) acknowledged writes lost: \(check.lost.prefix(5))")
            #expect(check.unexplained.isEmpty, "\(mode): \(check.unexplained.prefix(5))")
            clusterReport(
                "PostgreSQL stop -m \(mode): health 503 after \(String(format: "%.3f", toUnavailable)) s, requests answered "
                    + "errSecIO within \(String(format: "%.3f", slowestProbe)) s, health 200 again \(String(format: "%.3f", toRecovered)) s "
                    + "after the start; \(counts.acknowledged) acknowledged writes, \(check.lost.count) lost, \(counts.retried) "
                    + "attempts sent again, \(counts.committedUnanswered) cut off after their commit, slowest attempt "
                    + "\(String(format: "%.3f", counts.slowestAttempt)) s")
        }
    }

    /// A node whose request threads all hold a connection, idle while PostgreSQL restarts: once
    /// its health answers 200 again, every request succeeds, the first on each thread included
    /// (no thread answers errSecIO for the connection the restart closed).
    @Test func idleNodeServesEveryRequestRightAfterPostgresRestarts() throws {
        let postgres = try ThrowawayPostgres.standalone()
        defer { postgres.stop() }
        let cluster = try PGCluster(postgres: postgres, nodes: 1)
        defer { cluster.stopAll() }
        let token = try cluster.newClientToken("idle", groups: ["idle"])
        let http = cluster.client(0)
        // More requests than the node has threads (4 on two cores), so every thread connects.
        for index in 0..<32 { #expect(try http.add(service: "idle", account: "before\(index)", value: "v", token: token) == 201) }
        for mode in ["fast", "immediate"] {
            try postgres.stopServer(mode: mode)
            #expect(waitUntil(timeout: 3) { http.health().status == 503 }, "\(mode): health did not notice")
            try postgres.startServer()
            #expect(waitUntil(timeout: 15) { http.health().status == 200 }, "\(mode): health did not recover")
            var answers: [Int] = []
            for index in 0..<32 {
                answers.append(try http.add(service: "idle", account: "\(mode)\(index)", value: "v", token: token))
            }
            #expect(answers.allSatisfy { $0 == 201 }, "\(mode): answers after recovery: \(answers)")
        }
    }

    /// PostgreSQL frozen (its processes stopped with SIGSTOP: the kernel still acknowledges
    /// what is sent, so no TCP timeout fires and the server's statement_timeout does not run):
    /// requests and health answer 503 within the configured timeouts all the same, and once it
    /// runs again (SIGCONT) the node serves every request by itself.
    @Test func frozenPostgresAnswersWithinTheConfiguredTimeoutsAndRecovers() throws {
        let postgres = try ThrowawayPostgres.standalone()
        defer { postgres.stop() }
        let timeouts = (connect: 1.0, statement: 2.0)
        // Connecting (libpq waits 2 s at least, whatever connect_timeout says) and one statement's
        // answer (the statement timeout and half a second) at most.
        let bound = max(2, timeouts.connect) + timeouts.statement + 0.5
        let cluster = try PGCluster(
            postgres: postgres, nodes: 1,
            environment: [
                "KEYCHAIND_STORAGE_POSTGRESQL_CONNECT_TIMEOUT_SECONDS": "\(Int(timeouts.connect))",
                "KEYCHAIND_STORAGE_POSTGRESQL_STATEMENT_TIMEOUT_SECONDS": "\(Int(timeouts.statement))",
            ])
        defer { cluster.stopAll() }
        let http = cluster.client(0)
        let token = try cluster.newClientToken("frozen", groups: ["frozen"])
        for index in 0..<16 { #expect(try http.add(service: "f", account: "a\(index)", value: "v", token: token) == 201) }
        let pids = postgres.serverPIDs
        #expect(pids.count > 1, "the server's processes: \(pids)")
        for pid in pids { kill(pid, SIGSTOP) }
        var resumed = false
        defer { if !resumed { for pid in pids { kill(pid, SIGCONT) } } }
        let frozen = ContinuousClock.now

        var health: (status: Int, json: [String: Any]) = (0, [:])
        #expect(waitUntil(timeout: bound + 1.5) {
            health = http.health()
            return health.status == 503 && health.json["status"] as? String == "unavailable"
        }, "health with PostgreSQL frozen: \(health)")
        let toUnavailable = secondsSince(frozen)
        // Requests, one after another: each waits on its thread's connection or on connecting.
        var slowest = 0.0
        for index in 0..<2 {
            let start = ContinuousClock.now
            let answer = try? http.json(
                "POST", "/v1/items/genericPassword", ["service": "f", "account": "frozen\(index)", "value": "v"], token: token)
            let took = secondsSince(start)
            slowest = max(slowest, took)
            #expect(answer?.status == 503 && answer?.json["error"] as? String == "errSecIO", "\(answer?.text ?? "no answer")")
            #expect(took <= bound + 0.5, "a request took \(took) s with PostgreSQL frozen")
        }
        #expect(cluster.node(0).process.isRunning)

        for pid in pids { kill(pid, SIGCONT) }
        resumed = true
        let thawed = ContinuousClock.now
        #expect(waitUntil(timeout: 15) { http.health().status == 200 }, "health did not recover")
        let toRecovered = secondsSince(thawed)
        var answers: [Int] = []
        for index in 0..<16 { answers.append(try http.add(service: "f", account: "after\(index)", value: "v", token: token)) }
        #expect(answers.allSatisfy { $0 == 201 }, "answers after PostgreSQL ran again: \(answers)")
        clusterReport(
            "PostgreSQL frozen: requests answered 503 errSecIO within \(String(format: "%.2f", slowest)) s, health 503 after "
                + "\(String(format: "%.2f", toUnavailable)) s, 200 again \(String(format: "%.2f", toRecovered)) s after SIGCONT")
    }

    /// The number of threads of process `pid` (/proc/<pid>/status), -1 when unknown.
    static func threadCount(_ pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") })
        else { return -1 }
        return Int(line.split(separator: "\t").last ?? "") ?? -1
    }
}
