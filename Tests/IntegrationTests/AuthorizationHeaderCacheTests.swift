import Foundation
import KeychainClient
import Testing

/// The client library's optional in-process cache of `getAuthorizationHeader`, against the real
/// app on loopback (`InProcessKeychaind`): keychaind says in `Keychaind-Fresh-For` how long an answer stays fresh (the body stays
/// as docs/api.md fixes it), and requests are counted by the server itself (`/v1/metrics`).
@Suite(.serialized)
final class AuthorizationHeaderCacheTests {
    let provider: OAuthServer
    let server: InProcessKeychaind
    let admin: String

    init() throws {
        provider = try OAuthServer()
        server = try InProcessKeychaind(environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"])
        admin = server.adminToken()
    }

    deinit {
        server.stop()
        provider.stop()
    }

    /// `GET /v1/tokens/{service}/authorization` answers keychaind has given, as its metrics count them.
    func fetchesAnswered() throws -> Int {
        let metrics = try server.client().send("GET", "/v1/metrics", token: admin)
        let sample = #"keychaind_http_requests_total{route="/tokens/{service}/authorization",method="GET",status="200"}"#
        return Int(metrics.sample(sample) ?? 0)
    }

    func keychain(caching: Bool) throws -> KeychainClient {
        try KeychainClient(
            configuration: .init(
                baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, token: admin, timeout: 10,
                cachesAuthorizationHeader: caching))
    }

    @Test func theAnswerSaysHowLongItStaysFreshInAHeaderAndStaysNoStore() throws {
        let http = server.client()
        // With a refresh setting: until expiresAt − refreshBefore.
        _ = try provider.register(
            "kept.example.com", on: server, expiresAt: RFC3339Text.format(Date().addingTimeInterval(3600)))
        let kept = try http.send("GET", "/v1/tokens/kept.example.com/authorization", token: admin)
        #expect(kept.status == 200)
        #expect(kept.json.keys.sorted() == ["Authorization"])
        #expect(kept.headers["cache-control"] == "no-store")
        let keptFor = try #require(kept.headers["keychaind-fresh-for"].flatMap { Int($0) })
        #expect((3500...3540).contains(keptFor), "\(keptFor)")
        // Without one: until expiresAt. With no expiry stored: no header, nobody can tell.
        let put = try http.json(
            "PUT", "/v1/tokens/plain.example.com", ["accessToken": "plain", "expiresIn": 600], token: admin)
        #expect(put.status == 200)
        let plain = try http.send("GET", "/v1/tokens/plain.example.com/authorization", token: admin)
        #expect((560...600).contains(plain.headers["keychaind-fresh-for"].flatMap { Int($0) } ?? -1))
        _ = try http.json("PUT", "/v1/tokens/forever.example.com", ["accessToken": "forever"], token: admin)
        let forever = try http.send("GET", "/v1/tokens/forever.example.com/authorization", token: admin)
        #expect(forever.status == 200)
        #expect(forever.headers["keychaind-fresh-for"] == nil)
        #expect(forever.headers["cache-control"] == "no-store")
    }

    /// The window's end is stepped through on a test clock in KeychainClientTests
    /// (`AuthorizationHeaderCacheWindowTests`); here, against the server, what is kept and when
    /// it is asked again, with windows long enough that no timing can decide the outcome.
    @Test func withTheCacheOnCallsWithinTheWindowAskNothing() async throws {
        let seeded = try provider.register(
            "cached.example.com", on: server, expiresAt: RFC3339Text.format(Date().addingTimeInterval(3600)))
        let keychain = try keychain(caching: true)
        let first = try await keychain.getAuthorizationHeader(service: "cached.example.com")
        #expect(first == ["Authorization": "Bearer \(seeded.accessToken)"])
        #expect(try fetchesAnswered() == 1)
        for _ in 0..<3 { #expect(try await keychain.getAuthorizationHeader(service: "cached.example.com") == first) }
        #expect(try fetchesAnswered() == 1)

        // New tokens stored through this client are not hidden behind the kept header.
        try await keychain.saveTokens(service: "cached.example.com", accessToken: "stored-anew", refreshToken: nil)
        #expect(try await keychain.getAuthorizationHeader(service: "cached.example.com")
            == ["Authorization": "Bearer stored-anew"])
        #expect(try fetchesAnswered() == 2)
    }

    @Test func aDueTokenIsRefreshedByTheServerAndTheNewHeaderIsKeptInTurn() async throws {
        // Due already (expiresAt within refreshBefore): the first fetch refreshes on the server.
        let seeded = try provider.register(
            "due.example.com", on: server, expiresAt: RFC3339Text.format(Date().addingTimeInterval(30)))
        let keychain = try keychain(caching: true)
        let before = try fetchesAnswered()
        let header = try await keychain.getAuthorizationHeader(service: "due.example.com")
        let issued = try provider.stats().issued
        #expect(header == ["Authorization": "Bearer \(try #require(issued.last))"])
        #expect(header != ["Authorization": "Bearer \(seeded.accessToken)"])
        #expect(try await keychain.getAuthorizationHeader(service: "due.example.com") == header)
        #expect(try fetchesAnswered() == before + 1)
    }

    @Test func withTheCacheOffOrNoExpiryEveryCallAsks() async throws {
        _ = try provider.register(
            "uncached.example.com", on: server, expiresAt: RFC3339Text.format(Date().addingTimeInterval(3600)))
        let plain = try keychain(caching: false)
        for _ in 0..<3 { _ = try await plain.getAuthorizationHeader(service: "uncached.example.com") }
        #expect(try fetchesAnswered() == 3)
        // The cache on, but no expiry stored: nothing says how long the header stays valid.
        let caching = try keychain(caching: true)
        try await caching.saveTokens(service: "forever.example.com", accessToken: "forever", refreshToken: nil)
        for _ in 0..<3 {
            #expect(try await caching.getAuthorizationHeader(service: "forever.example.com")
                == ["Authorization": "Bearer forever"])
        }
        #expect(try fetchesAnswered() == 6)
    }
}
