import Foundation
import KeychainTestSupport
import Testing

/// Issues 30 and 31 together: server-side refresh with several nodes on PostgreSQL. Each node's
/// single flight is its own, so the exchange also holds the setting's advisory lock: fetches of
/// an expired token on every node at once make one exchange, and a rotating provider's refresh
/// token is sent once.
@Suite(.serialized)
final class ClusterRefreshTests {
    @Test func concurrentFetchesOnTwoNodesMakeOneExchange() throws {
        let provider = try OAuthServer()
        defer { provider.stop() }
        let cluster = try PGCluster(
            postgres: try ThrowawayPostgres.shared(), nodes: 2,
            environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"])
        defer { cluster.stopAll() }
        let seeded = try provider.register("shared.example.com", on: cluster.nodes[0])
        try provider.control(mode: "slow", delay: 1)

        let answers = ConcurrentAnswers()
        let admin = cluster.adminToken
        let clients = [cluster.client(0), cluster.client(1)]
        DispatchQueue.concurrentPerform(iterations: 32) { index in
            answers.add(try? clients[index % 2].send("GET", "/v1/tokens/shared.example.com/authorization", token: admin))
        }
        let stats = try provider.stats()
        #expect(stats.calls == 1, "\(stats.calls) exchanges")
        #expect(stats.presented == [seeded.refreshToken])
        let headers = answers.all.map { $0?.json["Authorization"] as? String }
        #expect(headers.count == 32)
        #expect(headers.allSatisfy { $0 == "Bearer \(stats.issued.first ?? "?")" }, "\(answers.all.map { $0?.text ?? "nil" })")
        for client in clients {
            let state = try client.send("GET", "/v1/tokens/shared.example.com/refresh", token: admin)
            #expect(state.json["state"] as? String == "ok", "\(state.text)")
        }
    }
}
