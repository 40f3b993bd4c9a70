import Testing

@testable import KeychainHTTP

struct AuthenticatorTests {
    @Test(arguments: [
        ("Bearer kc_abc", "kc_abc"),
        ("bearer kc_abc", "kc_abc"),
        ("BEARER \tkc_abc \t", "kc_abc"),
        ("Bearer  kc_é", "kc_é"),
        ("Bearer ", nil),
        ("Bearer    ", nil),
        ("Basic a2NfYWJj", nil),
        ("Bearerkc_abc", nil),
        ("Bear", nil),
        ("", nil),
    ] as [(String, String?)])
    func bearerToken(_ header: String, _ token: String?) {
        #expect(Authenticator.bearerToken(header) == token)
    }
}

struct RequestLogLineTests {
    @Test func methodRouteStatusMillisecondsAndClient() {
        #expect(
            KeychainApplication.requestLine(.get, "/tokens/{service}/authorization", 200, microseconds: 42, client: "app1")
                == "GET /tokens/{service}/authorization 200 0.042ms client=app1")
        #expect(
            KeychainApplication.requestLine(.post, "unmatched", 404, microseconds: 1_234_567, client: nil)
                == "POST unmatched 404 1234.567ms client=-")
    }
}
