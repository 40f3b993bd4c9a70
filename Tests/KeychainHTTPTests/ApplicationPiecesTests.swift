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
        #expect(Authenticator.bearerToken(header).map(String.init) == token)
    }
}

struct RequestHeaderTests {
    @Test func namesAreLowerCasedAndFoundWhateverTheCaseAskedFor() {
        let request = HTTPRequest(method: .get, path: "/", headers: [("X-Mixed", "1"), ("lower", "2"), ("X-MIXED", "3")])
        #expect(request.headers.map(\.name) == ["x-mixed", "lower", "x-mixed"])
        #expect(request.header("x-mixed") == "1")
        #expect(request.header("X-Mixed") == "1")
        #expect(request.header("LOWER") == "2")
        #expect(request.header("missing") == nil)
    }
}

struct RequestLogLineTests {
    @Test func methodRouteStatusMillisecondsAndClient() {
        #expect(
            RequestLogLine.text(.get, "/tokens/{service}/authorization", 200, microseconds: 42, client: "app1")
                == "GET /tokens/{service}/authorization 200 0.042ms client=app1")
        #expect(
            RequestLogLine.text(.post, "unmatched", 404, microseconds: 1_234_567, client: nil)
                == "POST unmatched 404 1234.567ms client=-")
    }
}
