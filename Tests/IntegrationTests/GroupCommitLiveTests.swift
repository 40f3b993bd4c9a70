import Foundation
import Testing

/// Group commit seen from outside: concurrent writes over HTTP each get their own answer, and
/// they take fewer commits than writes (`keychaind_storage_commits_total`). The server has two
/// workers: more than two writes per commit means writes waited for their commit off the workers
/// (offloaded), as many as the connections sending them.
@Suite struct GroupCommitLiveTests {
    @Test func concurrentWritesEachGetTheirAnswerInFewerCommits() throws {
        let server = try InProcessKeychaind(environment: ["KEYCHAIND_THREADS": "2"])
        defer { server.stop() }
        let admin = try server.adminToken()
        let token = try server.newClientToken("batch", groups: ["batch"])
        let port = server.port
        let commitsBefore = try #require(try server.client().send("GET", "/v1/metrics", token: admin)
            .sample("keychaind_storage_commits_total"))
        let threads = 32, perThread = 8
        let statuses = Locked([String: [Int]]())
        Hardening.concurrently(threads) { thread in
            let http = HTTPTestClient(port: port)
            for index in 0..<perThread {
                // Threads 2k and 2k+1 add the same accounts (one 201, one 409 for each); every
                // fourth thread also replaces a token pair of its own (a delete and two adds).
                let account = "a\(thread / 2)-\(index)"
                let add = try? http.json(
                    "POST", "/v1/items/genericPassword", ["service": "batch", "account": account, "value": account],
                    token: token)
                statuses.withLock { $0[account, default: []].append(add?.status ?? 0) }
                if thread % 4 == 0 {
                    let put = try? http.json(
                        "PUT", "/v1/tokens/svc-\(thread)", ["accessToken": "at-\(index)", "refreshToken": "rt-\(index)"],
                        token: token)
                    statuses.withLock { $0["svc-\(thread)", default: []].append(put?.status ?? 0) }
                }
            }
        }
        let answers = statuses.withLock { $0 }
        let writes = answers.values.reduce(0) { $0 + $1.count }
        #expect(writes == threads * perThread + threads / 4 * perThread)
        for (name, codes) in answers {
            if name.hasPrefix("svc-") {
                #expect(codes == Array(repeating: 200, count: perThread), "\(name): \(codes)")
            } else {
                #expect(codes.sorted() == [201, 409], "\(name): \(codes)")
            }
        }
        let http = server.client()
        for thread in stride(from: 0, to: threads, by: 4) {
            let tokens = try http.send("GET", "/v1/tokens/svc-\(thread)", token: token)
            #expect(tokens.json["accessToken"] as? String == "at-\(perThread - 1)")
        }
        let metrics = try http.send("GET", "/v1/metrics", token: admin)
        let commits = try #require(metrics.sample("keychaind_storage_commits_total")) - commitsBefore
        #expect(commits >= 1 && Double(writes) / commits > 2, "\(Int(commits)) commits for \(writes) writes")
    }
}
