import Foundation
import KeychaindTesting
import Testing

/// A provider that answers slowly or not at all stops nobody but the callers of its own service:
/// fetches that wait for its exchange hold no worker thread (they are suspended until it ends), so
/// other tenants' fetches and `/v1/health` are answered at once meanwhile, however many callers
/// wait. The real binary with 4 workers against Authlib's token endpoint told to answer slowly.
@Suite(.serialized)
final class ProviderStallTests {
    let provider: OAuthServer
    let server: KeychaindProcess
    let admin: String

    init() throws {
        provider = try OAuthServer()
        server = try KeychaindProcess(environment: [
            "KEYCHAIND_THREADS": "4", "KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0",
            "KEYCHAIND_REFRESH_WAIT_SECONDS": "15", "KEYCHAIND_REFRESH_TIMEOUT_SECONDS": "30",
        ])
        admin = try server.adminToken()
    }

    deinit {
        server.stop()
        provider.stop()
    }

    var http: HTTPTestClient { server.client() }

    /// Another tenant: a client of its own group with a token stored (no refresh setting).
    func otherTenant() throws -> String {
        let created = try http.json(
            "POST", "/v1/admin/clients", ["name": "other", "accessGroups": ["other.group"]], token: admin)
        #expect(created.status == 201, "\(created.text)")
        let token = try #require(created.json["token"] as? String)
        let put = try http.json("PUT", "/v1/tokens/other.example.com", ["accessToken": "other-access"], token: token)
        #expect(put.status == 200, "\(put.text)")
        return token
    }

    /// `count` fetches of `service`'s authorization, each on its own connection and thread, started
    /// 0.1 s apart: a burst would let one worker accept several connections before its first
    /// answer blocks it, leaving others free; one at a time, each lands on a worker that is free,
    /// as callers arriving over a provider's slow answer do.
    func fetchesInQuickSuccession(_ count: Int, _ service: String) -> (ConcurrentAnswers, [WorkerThread]) {
        let answers = ConcurrentAnswers()
        let threads = (0..<count).map { index in
            defer { Thread.sleep(forTimeInterval: 0.1) }
            return WorkerThread(name: "fetch-\(index)") { [http, admin] in
                answers.add(try? http.send("GET", "/v1/tokens/\(service)/authorization", token: admin))
            }
        }
        return (answers, threads)
    }

    /// Seconds `body` took.
    func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = Date()
        try body()
        return Date().timeIntervalSince(start)
    }

    @Test func callersWaitingForASlowProviderLeaveEveryOtherRequestAnsweredAtOnce() throws {
        let other = try otherTenant()
        _ = try provider.register("slow.example.com", on: server)
        try provider.control(mode: "slow", delay: 8)

        // Ten callers wait for the one exchange: more than the 4 workers.
        let (answers, threads) = fetchesInQuickSuccession(10, "slow.example.com")
        #expect(try provider.stats().calls == 1)
        Thread.sleep(forTimeInterval: 0.2)  // the last caller has arrived and waits

        var slowest = 0.0
        for _ in 0..<20 {
            slowest = max(slowest, try seconds {
                let fetch = try http.send("GET", "/v1/tokens/other.example.com/authorization", token: other)
                #expect(fetch.json["Authorization"] as? String == "Bearer other-access", "\(fetch.text)")
                #expect(try http.send("GET", "/v1/health").status == 200)
            })
        }
        // Blocked workers would hold these for the provider's remaining ~7 s.
        #expect(slowest < 2, "another tenant's fetch took \(slowest) s while the provider was slow")
        #expect(answers.all.count == 0, "the callers of the slow service were answered before its exchange ended")

        for thread in threads { thread.join() }
        let issued = try provider.stats().issued
        #expect(issued.count == 1)  // still one exchange for every caller
        #expect(answers.all.count == 10)
        for answer in answers.all {
            #expect(answer?.status == 200, "\(answer?.text ?? "no answer")")
            #expect(answer?.json["Authorization"] as? String == "Bearer \(issued.first ?? "")")
        }
    }

    @Test func callersOfAProviderThatHangsPastTheWaitLimitGetAQuickErrorAndOthersAreServed() throws {
        let waitLimited = try KeychaindProcess(environment: [
            "KEYCHAIND_THREADS": "4", "KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0",
            "KEYCHAIND_REFRESH_WAIT_SECONDS": "2", "KEYCHAIND_REFRESH_TIMEOUT_SECONDS": "30",
        ])
        defer { waitLimited.stop() }
        _ = try provider.register("hung.example.com", on: waitLimited)
        try provider.control(mode: "slow", delay: 25)
        let http = waitLimited.client()
        let admin = try waitLimited.adminToken()

        let answers = ConcurrentAnswers()
        let threads = (0..<12).map { index in
            WorkerThread(name: "hung-\(index)") {
                answers.add(try? http.send("GET", "/v1/tokens/hung.example.com/authorization", token: admin))
            }
        }
        #expect(waitUntil(timeout: 10) { (try? self.provider.stats().calls) == 1 })
        let health = try seconds {
            let answer = try http.send("GET", "/v1/health")
            #expect(answer.status == 200)
        }
        #expect(health < 1, "health took \(health) s")

        let waited = try seconds { for thread in threads { thread.join() } }
        #expect(waited < 6, "the callers waited \(waited) s, past the 2 s wait limit")
        #expect(answers.all.count == 12)
        for answer in answers.all {
            #expect(answer?.status == 502, "\(answer?.text ?? "no answer")")
            #expect(answer?.text.contains("in progress") == true, "\(answer?.text ?? "")")
        }
        #expect(try provider.stats().calls == 1)  // nobody started a second exchange meanwhile
    }
}
