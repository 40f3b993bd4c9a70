import Foundation
import KeychainTestSupport
import KeychaindTesting
import Testing

/// Token lifetimes and workload login on two PostgreSQL nodes: a login on one node is a token on
/// every node at once, a renewal on one holds on the other past the cached expiry, a revocation
/// on one is refused on every thread of the other within the follow bound, a role narrowed on one
/// node revokes what the other issued; and nothing expiring is made while an older node is live.
@Suite(.serialized)
final class ClusterLoginTests {
    @Test func renewalsRevocationsAndRolesHoldOnEveryNode() throws {
        let postgres = try ThrowawayPostgres.shared()
        let cluster = try PGCluster(postgres: postgres, nodes: 2, environment: ["KEYCHAIND_LIMITS_AUTH_FAILURES_PER_MINUTE": "0"])
        defer { cluster.stopAll() }
        let issuer = try OIDCIssuer()
        defer { issuer.stop() }
        let admin = cluster.adminToken
        var role: [String: Any] = [
            "issuer": issuer.issuer, "audiences": [OIDCIssuer.audience], "boundSubject": OIDCIssuer.subject,
            "accessGroups": ["payments"], "tokenTTL": 4, "tokenMaxTTL": 60,
        ]
        let put = try cluster.client(0).json("PUT", "/v1/admin/auth/jwt/roles/payments", role, token: admin)
        #expect(put.status == 200, "\(put.text)")
        // Enough requests in a row that every request thread of a node answers (and caches) one.
        func statuses(_ index: Int, _ token: String) -> [Int] {
            (0..<16).map { _ in (try? cluster.client(index).send("GET", "/v1/auth/token/self", token: token).status) ?? 0 }
        }
        func login(on index: Int) throws -> String {
            let answer = try cluster.client(index).json("POST", "/v1/auth/jwt/login", ["role": "payments", "jwt": try issuer.mint()])
            return try #require(answer.json["token"] as? String, "\(answer.status) \(answer.text)")
        }

        let token = try login(on: 1)
        #expect(statuses(0, token).allSatisfy { $0 == 200 })
        #expect(statuses(1, token).allSatisfy { $0 == 200 })
        // Renewed on node 0: node 1's threads cached the first expiry, read again once it passes.
        let renew = try cluster.client(0).json("POST", "/v1/auth/token/renew-self", ["increment": 30], token: token)
        #expect(renew.status == 200, "\(renew.text)")
        Thread.sleep(forTimeInterval: 4.5)
        #expect(statuses(1, token).allSatisfy { $0 == 200 })
        // Revoked on node 1: refused on every thread of node 0 within the follow bound.
        #expect(try cluster.client(1).send("POST", "/v1/auth/token/revoke-self", token: token).status == 200)
        let revoked = ContinuousClock.now
        var last: [Int] = []
        let refused = waitUntil(timeout: ClusterTests.followBound) {
            last = statuses(0, token)
            return last.allSatisfy { $0 == 401 }
        }
        #expect(refused && secondsSince(revoked) <= ClusterTests.followBound + 0.2, "\(last)")

        // A role narrowed on node 0 revokes the tokens node 1 issued under it.
        let issued = try login(on: 1)
        #expect(statuses(0, issued).allSatisfy { $0 == 200 })
        role["boundSubject"] = "system:serviceaccount:payments:other"
        #expect(try cluster.client(0).json("PUT", "/v1/admin/auth/jwt/roles/payments", role, token: admin).status == 200)
        #expect(waitUntil(timeout: ClusterTests.followBound) { statuses(1, issued).allSatisfy { $0 == 401 } })

        // A live node of an older release could not expire tokens: nothing expiring is made.
        let result = try Command.run([
            "psql", "-h", "127.0.0.1", "-p", "\(postgres.port)", "-U", postgres.user, "-d", cluster.database, "-AtX",
            "-v", "ON_ERROR_STOP=1", "-c",
            "INSERT INTO cluster_nodes VALUES ('old-host:/var/lib/keychaind', '0.0.9', 5, now(), now())",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let client = try cluster.client(1).json("POST", "/v1/admin/clients", ["name": "ttl", "accessGroups": ["g"], "ttl": 60], token: admin)
        #expect(client.status == 400 && (client.json["detail"] as? String ?? "").contains("cluster not upgraded"), "\(client.text)")
        let refusedRole = try cluster.client(0).json("PUT", "/v1/admin/auth/jwt/roles/other", role, token: admin)
        #expect(refusedRole.status == 400 && (refusedRole.json["detail"] as? String ?? "").contains("cluster not upgraded"))
        // Static tokens without expiry are made as before.
        #expect(try cluster.client(1).json("POST", "/v1/admin/clients", ["name": "plain", "accessGroups": ["g"]], token: admin).status == 201)
    }
}
