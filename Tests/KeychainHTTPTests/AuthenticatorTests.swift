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
