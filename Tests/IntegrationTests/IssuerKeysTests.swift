import Foundation
import KeychainCore
import KeychainRefresh
import Logging
import Synchronization
import Testing

@testable import KeychainLogin

/// The issuer key cache against the real issuer (`oidc_issuer.py`, fetched with the token
/// endpoint client's GET), under a monotonic clock the test moves: fresh for 5 minutes, refetched
/// at most once per 10 s, the last good set served through an outage for `staleSeconds` (counted),
/// then nothing.
@Suite struct IssuerKeysTests {
    struct CurlFetcher: IssuerDocumentFetcher {
        let client = TokenEndpointClient()

        func fetch(_ url: TokenEndpointURL, caPEM: String?) throws -> (status: Int, body: [UInt8]) {
            try client.get(url, caPEM: caPEM)
        }
    }

    @Test func freshRefetchedStaleThenGone() throws {
        let issuer = try OIDCIssuer()
        defer { issuer.stop() }
        let clock = Mutex(0.0)
        let keys = IssuerKeys(
            fetcher: CurlFetcher(), staleSeconds: 3600, logger: Logger(label: "test"), now: { clock.withLock { $0 } })
        func at(_ time: Double) { clock.withLock { $0 = time } }
        let role = LoginRole(
            name: "ci", issuer: issuer.issuer, keys: .discovery, audiences: ["keychaind"], boundSubject: "x", accessGroups: ["g"])

        let first = try #require(try keys.keys(for: role))
        #expect(first.count == OIDCIssuer.kids.count)
        #expect(try issuer.stats() == (jwks: 1, discovery: 1))
        try issuer.control(jwks: "error")
        at(100)
        #expect(try keys.keys(for: role)?.count == first.count)
        #expect(try issuer.stats().jwks == 1)
        // Past 5 minutes the set is fetched again; the issuer fails, the last good set serves.
        at(400)
        #expect(try keys.keys(for: role)?.count == first.count)
        #expect(keys.staleServes == 1)
        #expect(try issuer.stats().jwks == 2)
        // Within 10 s of that attempt, nothing is asked.
        at(405)
        #expect(try keys.keys(for: role)?.count == first.count)
        #expect(try issuer.stats().jwks == 2)
        // An hour past freshness there is no set to serve.
        at(400 + 3600)
        #expect(throws: IssuerKeysUnavailable.self) { try keys.keys(for: role) }
        // Back: fetched again; an unknown kid refetches only when 10 s have passed.
        try issuer.control(jwks: "normal")
        at(5000)
        #expect(try keys.keys(for: role)?.count == first.count)
        let asked = try issuer.stats().jwks
        at(5003)
        #expect(try keys.keys(for: role, refetch: true) == nil)
        #expect(try issuer.stats().jwks == asked)
        at(5011)
        #expect(try keys.keys(for: role, refetch: true)?.count == first.count)
        #expect(try issuer.stats().jwks == asked + 1)
    }
}
