import Foundation
import KeychainAPI
import KeychainCore
import KeychainTestSupport
import Logging
import Synchronization
import Testing

@testable import KeychainHTTP

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    private let seconds = Mutex<Double>(1000)
    var now: Double { seconds.withLock { $0 } }
    func advance(_ by: Double) { seconds.withLock { $0 += by } }
}

struct AuthFailureLimiterTests {
    @Test func budgetThenRetryAfterThenRefill() {
        let clock = ManualClock()
        let limiter = AuthFailureLimiter(failuresPerMinute: 6, maxAddresses: 10, now: { clock.now })
        for _ in 0..<6 { #expect(limiter.recordFailure(from: "10.0.0.1") == nil) }
        // Empty: 6 per minute refills one every 10 s.
        #expect(limiter.recordFailure(from: "10.0.0.1") == 10)
        #expect(limiter.recordFailure(from: "10.0.0.2") == nil, "another address has its own budget")
        clock.advance(5)
        #expect(limiter.recordFailure(from: "10.0.0.1") == 5, "refused failures do not deepen the debt")
        clock.advance(5)
        #expect(limiter.recordFailure(from: "10.0.0.1") == nil)
        #expect(limiter.recordFailure(from: "10.0.0.1") == 10)
    }

    @Test func theTableIsBoundedAndOverflowSharesOneBudget() {
        let clock = ManualClock()
        let limiter = AuthFailureLimiter(failuresPerMinute: 2, maxAddresses: 3, now: { clock.now })
        for index in 0..<3 { #expect(limiter.recordFailure(from: "10.0.0.\(index)") == nil) }
        // Full, nothing refilled: new addresses share the overflow bucket (2 per minute in all).
        #expect(limiter.recordFailure(from: "10.1.0.1") == nil)
        #expect(limiter.recordFailure(from: "10.1.0.2") == nil)
        #expect(limiter.recordFailure(from: "10.1.0.3") != nil)
        #expect(limiter.trackedAddresses == 3)
        // A minute later every bucket has refilled; the sweep makes room again.
        clock.advance(61)
        #expect(limiter.recordFailure(from: "10.1.0.3") == nil)
        #expect(limiter.trackedAddresses == 1)
        // Many distinct addresses never grow the table past its bound.
        for index in 0..<1000 { _ = limiter.recordFailure(from: "192.168.\(index / 256).\(index % 256)") }
        #expect(limiter.trackedAddresses <= 3)
    }

    @Test func keysIPv6ByPrefixAndMappedIPv4AsIPv4() {
        #expect(AddressBudget.key(for: "127.0.0.1") == "127.0.0.1")
        #expect(AddressBudget.key(for: nil) == "-")
        #expect(AddressBudget.key(for: "2001:db8:1:2:aaaa::1") == "2001:0db8:0001:0002::/64")
        #expect(AddressBudget.key(for: "2001:db8:1:2:bbbb::9") == "2001:0db8:0001:0002::/64")
        #expect(AddressBudget.key(for: "::ffff:10.1.2.3") == "10.1.2.3")
    }

    @Test func onlyFailuresAreLimitedAndAValidTokenFromTheSameAddressKeepsWorking() throws {
        let clients = InMemoryClientStore()
        let tokens = TestTokenIssuer()
        var router = Router()
        router.addClientRoutes(clients: clients, tokens: tokens)
        let clock = ManualClock()
        let application = KeychainApplication(
            router: router, authenticator: Authenticator(clients: clients, tokens: tokens),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
            authFailureLimiter: AuthFailureLimiter(failuresPerMinute: 3, maxAddresses: 10, now: { clock.now }))
        let (token, hash) = tokens.newToken()
        try clients.addClient(Client(name: "root", accessGroups: ["root"], role: .admin, createdAt: Date()), tokenHash: hash)
        func list(_ token: String?, from address: String = "10.9.9.9") -> HTTPResponse {
            application.respond(to: HTTPRequest(
                method: .get, path: "/v1/admin/clients", queryItems: [],
                headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [], remoteAddress: address))
        }
        for _ in 0..<3 { #expect(list("kc_wrong").status == 401) }
        let limited = list("kc_wrong")
        #expect(limited.status == 429)
        #expect(limited.headers.contains { $0.name == "Retry-After" && $0.value == "20" })
        let body = try JSONValue.parse(limited.body)
        #expect(body["status"] == .integer(Int64(KeychainError.Code.authFailed.rawValue)))
        #expect(list(nil).status == 429, "a missing token is a failure too")
        #expect(list(token).status == 200, "a valid token is never limited")
        #expect(list("kc_wrong", from: "10.9.9.10").status == 401)
        clock.advance(20)
        #expect(list("kc_wrong").status == 401)
    }
}
