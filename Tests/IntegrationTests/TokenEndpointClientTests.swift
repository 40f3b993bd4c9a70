import Foundation
import KeychainCore
@testable import KeychainRefresh
import Testing

/// The libcurl token endpoint client against Authlib's token endpoint on loopback, over plain
/// HTTP and over HTTPS with a throwaway CA.
@Suite(.serialized)
struct TokenEndpointClientTests {
    func setting(
        _ server: OAuthServer, grant: RefreshSetting.Grant, auth: RefreshSetting.ClientAuth, scope: String? = nil
    ) throws -> RefreshSetting {
        let client = auth == .basic ? OAuthServer.basicClient : OAuthServer.postClient
        return RefreshSetting(
            tokenEndpoint: try TokenEndpointURL(server.tokenEndpoint), grant: grant, clientId: client.id,
            clientSecret: SecretBytes(utf8: client.secret), clientAuth: auth, scope: scope)
    }

    @Test func refreshTokenGrantWithBasicAuthenticationRotatesTheRefreshToken() throws {
        let server = try OAuthServer()
        defer { server.stop() }
        let seeded = try server.seed(clientId: OAuthServer.basicClient.id)
        let client = TokenEndpointClient()
        let grant = try client.exchange(
            setting(server, grant: .refreshToken, auth: .basic), refreshToken: SecretBytes(utf8: seeded.refreshToken))
        #expect(!grant.accessToken.isEmpty)
        #expect(grant.expiresIn == 3600)
        let rotated = try #require(grant.refreshToken)
        #expect(rotated != seeded.refreshToken)
        let stats = try server.stats()
        #expect(stats.presented == [seeded.refreshToken])
        #expect(stats.authMethods == ["client_secret_basic"])
        #expect(stats.issued == [grant.accessToken])

        // The old refresh token was revoked by the rotation.
        #expect(throws: TokenExchangeFailure.refused(error: "invalid_grant", description: nil)) {
            try client.exchange(
                setting(server, grant: .refreshToken, auth: .basic), refreshToken: SecretBytes(utf8: seeded.refreshToken))
        }
    }

    @Test func clientCredentialsWithPostAuthenticationOverHTTPSVerifiedAgainstTheConfiguredCA() throws {
        let tls = try MetricsAndTLSTests.selfSignedCertificate()
        let server = try OAuthServer(tls: tls)
        defer { server.stop() }
        let setting = try setting(server, grant: .clientCredentials, auth: .post, scope: "read write")
        let grant = try TokenEndpointClient(settings: OutboundHTTPSettings(caFile: tls.cert)).exchange(setting, refreshToken: nil)
        #expect(!grant.accessToken.isEmpty)
        #expect(grant.refreshToken == nil)
        #expect(try server.stats().authMethods == ["client_secret_post"])

        // Against the system's CAs the throwaway CA is unknown: refused, and no call was answered.
        #expect {
            try TokenEndpointClient().exchange(setting, refreshToken: nil)
        } throws: { error in
            guard case .unavailable(let reason) = error as? TokenExchangeFailure else { return false }
            return reason.contains("calling the token endpoint failed")
        }
        #expect(try server.stats().calls == 1)
    }

    @Test func wrongClientAuthenticationIsInvalidClient() throws {
        let server = try OAuthServer()
        defer { server.stop() }
        var setting = try setting(server, grant: .clientCredentials, auth: .basic)
        setting.clientAuth = .post  // basic-client may only authenticate with HTTP Basic
        #expect {
            try TokenEndpointClient().exchange(setting, refreshToken: nil)
        } throws: { error in
            (error as? TokenExchangeFailure)?.needsReauth == true
        }
    }

    @Test func serverErrorsAndTimeoutsAreUnavailable() throws {
        let server = try OAuthServer()
        defer { server.stop() }
        let setting = try setting(server, grant: .clientCredentials, auth: .basic)
        try server.control(mode: "error")
        #expect(throws: TokenExchangeFailure.unavailable("the token endpoint answered HTTP 503 with error temporarily_unavailable")) {
            try TokenEndpointClient().exchange(setting, refreshToken: nil)
        }
        try server.control(mode: "slow", delay: 2)
        let started = Date()
        #expect {
            try TokenEndpointClient(settings: OutboundHTTPSettings(timeoutMilliseconds: 500)).exchange(setting, refreshToken: nil)
        } throws: { error in
            guard case .unavailable(let reason) = error as? TokenExchangeFailure else { return false }
            return reason.contains("Timeout")
        }
        #expect(Date().timeIntervalSince(started) < 1.9)
    }

    @Test func anAnswerLargerThanTheBoundIsRefused() throws {
        let server = try OAuthServer()
        defer { server.stop() }
        let setting = try setting(server, grant: .clientCredentials, auth: .basic)
        #expect(throws: TokenExchangeFailure.unavailable("the token endpoint's answer is larger than 32 bytes")) {
            try TokenEndpointClient(settings: OutboundHTTPSettings(maximumAnswerBytes: 32)).exchange(setting, refreshToken: nil)
        }
    }

    @Test func plainHTTPOnlyToLoopbackAndHTTPSOtherwise() throws {
        #expect(throws: KeychainError.self) { try TokenEndpointURL("http://example.com/token") }
        #expect(throws: KeychainError.self) { try TokenEndpointURL("http://10.0.0.1/token") }
        #expect(throws: KeychainError.self) { try TokenEndpointURL("ftp://127.0.0.1/token") }
        #expect(throws: KeychainError.self) { try TokenEndpointURL("https://user:pw@example.com/token") }
        #expect(throws: KeychainError.self) { try TokenEndpointURL("/token") }
        #expect(try TokenEndpointURL("http://127.0.0.1:8080/token").isHTTPS == false)
        #expect(try TokenEndpointURL("http://localhost/token").isHTTPS == false)
        #expect(try TokenEndpointURL("http://[::1]:9/token").isHTTPS == false)
        #expect(try TokenEndpointURL("https://auth.example.com/oauth/token").isHTTPS)
    }

    /// Issue 40, finding 8: `127.0.0.08` and `127.0.0.09` passed the loopback rule, and libcurl
    /// reads them as host names (not octal), which DNS resolves. Only canonical decimal
    /// 127.x.y.z, `[::1]` and `localhost` (pinned to 127.0.0.1 and ::1, never looked up) pass.
    @Test(arguments: ["http://127.0.0.08/token", "http://127.0.0.09/token", "http://localhost./token", "http://[::ffff:127.0.0.1]/token"])
    func plainHTTPIsRefusedToAnythingLibcurlWouldLookUp(url: String) throws {
        #expect(throws: KeychainError.self) { try TokenEndpointURL(url) }
        // The client checks the host as libcurl reads it, before connecting.
        #expect(!TokenEndpointURL.isLoopback(TokenEndpointClient.hostAndPort(url).host))
    }

    /// Spellings libcurl turns into a loopback address itself (octal, short, hex) are refused
    /// too: a stored endpoint names its address one way.
    @Test(arguments: [
        "http://127.00.0.1/token", "http://0127.0.0.1/token", "http://127.0.0.010/token", "http://127.1/token",
        "http://2130706433/token", "http://0x7f.0.0.1/token", "http://[0:0:0:0:0:0:0:1]/token",
    ])
    func plainHTTPIsRefusedToALoopbackAddressSpelledNonCanonically(url: String) throws {
        #expect(throws: KeychainError.self) { try TokenEndpointURL(url) }
    }

    @Test func canonicalLoopbackLiteralsAndAPinnedLocalhostAreCalled() throws {
        for url in ["http://127.0.0.1/token", "http://127.255.0.9:8/token", "http://[::1]:9/token", "http://LocalHost/token"] {
            #expect(try TokenEndpointURL(url).isHTTPS == false)
            #expect(TokenEndpointURL.isLoopback(TokenEndpointClient.hostAndPort(url).host), "\(url)")
        }
        #expect(TokenEndpointClient.hostAndPort("http://[::1]:9/token") == ("::1", 9))
        #expect(TokenEndpointClient.hostAndPort("http://localhost/token") == ("localhost", 80))
        // localhost reaches the provider on 127.0.0.1 through the pinned addresses.
        let server = try OAuthServer()
        defer { server.stop() }
        var setting = try setting(server, grant: .clientCredentials, auth: .basic)
        setting.tokenEndpoint = try TokenEndpointURL("http://localhost:\(server.port)/token")
        #expect(!(try TokenEndpointClient().exchange(setting, refreshToken: nil).accessToken.isEmpty))
    }
}
