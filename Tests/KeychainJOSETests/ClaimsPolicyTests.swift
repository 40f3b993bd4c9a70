import KeychainCore
import Foundation
import KeychainAPI
import Testing

@testable import KeychainJOSE

/// `JWTClaimsPolicy.check`, `Glob` and `JSONPointer`.
@Suite struct ClaimsPolicyTests {
    static let now: TimeInterval = 1_700_000_000

    static let policy = JWTClaimsPolicy(
        issuer: "https://issuer.example", audiences: ["keychaind", "vault"], leeway: 30)

    static func claims(_ json: String) -> JSONValue { try! JSONValue.parse(json) }

    static func check(_ json: String, _ policy: JWTClaimsPolicy = policy, at now: TimeInterval = now) -> JWTRefusal? {
        refusal { try policy.check(claims(json), now: Date(timeIntervalSince1970: now)) }
    }

    static let valid = #"{"iss":"https://issuer.example","aud":"keychaind","exp":1700000600}"#

    @Test func acceptsValidClaims() {
        #expect(Self.check(Self.valid) == nil)
    }

    @Test func issuerByteForByte() {
        #expect(Self.check(#"{"aud":"keychaind","exp":1700000600}"#) == .issuer)
        #expect(Self.check(#"{"iss":"https://issuer.example/","aud":"keychaind","exp":1700000600}"#) == .issuer)
        #expect(Self.check(#"{"iss":["https://issuer.example"],"aud":"keychaind","exp":1700000600}"#) == .issuer)
        // "é" precomposed in the policy, decomposed in the token: equal as Swift strings, not as bytes.
        let composed = JWTClaimsPolicy(issuer: "https://\u{E9}.example", audiences: ["keychaind"])
        #expect("https://\u{E9}.example" == "https://e\u{301}.example")
        #expect(
            Self.check(#"{"iss":"https://e\u0301.example","aud":"keychaind","exp":1700000600}"#, composed) == .issuer)
        #expect(Self.check(#"{"iss":"https://\u00e9.example","aud":"keychaind","exp":1700000600}"#, composed) == nil)
    }

    @Test func audienceStringOrList() {
        func with(_ aud: String) -> String { #"{"iss":"https://issuer.example","aud":\#(aud),"exp":1700000600}"# }
        #expect(Self.check(with(#""vault""#)) == nil)
        #expect(Self.check(with(#"["other","vault"]"#)) == nil)
        #expect(Self.check(with(#"["other"]"#)) == .audience)
        #expect(Self.check(with(#"[]"#)) == .audience)
        #expect(Self.check(with(#""other""#)) == .audience)
        #expect(Self.check(with(#""Keychaind""#)) == .audience)
        #expect(Self.check(with(#"[1,"x"]"#)) == .audience)
        #expect(Self.check(with("null")) == .audience)
        #expect(Self.check(#"{"iss":"https://issuer.example","exp":1700000600}"#) == .audience)
    }

    @Test func expiryWithLeeway() {
        func at(_ exp: String, _ now: TimeInterval = ClaimsPolicyTests.now) -> JWTRefusal? {
            Self.check(#"{"iss":"https://issuer.example","aud":"keychaind","exp":\#(exp)}"#, at: now)
        }
        // now < exp + leeway (30 s).
        #expect(at("1699999971") == nil)
        #expect(at("1699999970") == .expired)
        #expect(at("1699999970.5") == nil)  // fractional seconds
        #expect(at("1699999969.9") == .expired)
        #expect(at("1.69999996e9") == .expired)  // an exponent: 1699999960
        #expect(at("1.7e9") == nil)
        var strict = Self.policy
        strict.leeway = 0
        #expect(Self.check(#"{"iss":"https://issuer.example","aud":"keychaind","exp":1700000000}"#, strict) == .expired)
        #expect(Self.check(#"{"iss":"https://issuer.example","aud":"keychaind","exp":1700000001}"#, strict) == nil)
        // Missing, or not a number.
        #expect(Self.check(#"{"iss":"https://issuer.example","aud":"keychaind"}"#) == .expired)
        #expect(at(#""1700000600""#) == .expired)
        #expect(at("null") == .expired)
        #expect(at("true") == .expired)
        #expect(at("9223372036854775807") == nil)  // the largest integer is a (far) time
    }

    @Test func notBeforeAndIssuedAtWithLeeway() {
        for claim in ["nbf", "iat"] {
            func at(_ time: String) -> JWTRefusal? {
                Self.check(#"{"iss":"https://issuer.example","aud":"keychaind","exp":1700000600,"\#(claim)":\#(time)}"#)
            }
            // time <= now + leeway (30 s).
            #expect(at("1700000030") == nil, "\(claim)")
            #expect(at("1700000031") == .notYetValid, "\(claim)")
            #expect(at("1700000030.5") == .notYetValid, "\(claim)")
            #expect(at("1600000000") == nil, "\(claim)")
            #expect(at(#""1600000000""#) == .notYetValid, "\(claim)")
        }
    }

    @Test func boundSubject() {
        var policy = Self.policy
        policy.boundSubject = "system:serviceaccount:prod:*"
        func sub(_ sub: String) -> JWTRefusal? {
            Self.check(#"{"iss":"https://issuer.example","aud":"keychaind","exp":1700000600,"sub":\#(sub)}"#, policy)
        }
        #expect(sub(#""system:serviceaccount:prod:api""#) == nil)
        #expect(sub(#""system:serviceaccount:prod:""#) == nil)
        #expect(sub(#""system:serviceaccount:staging:api""#) == .subject)
        #expect(sub("1") == .subject)
        #expect(Self.check(Self.valid, policy) == .subject)  // no sub
    }

    static let kubernetesClaims = #"""
        {"iss":"https://issuer.example","aud":["keychaind"],"exp":1700000600,"sub":"system:serviceaccount:prod:api",
         "kubernetes.io":{"namespace":"prod","serviceaccount":{"name":"api","uid":"0d1f"},"pod":{"name":"api-7d9"}},
         "a/b":{"c~d":"slash and tilde"},
         "groups":["dev","ops"],"level":3,"ratio":0.5,"admin":false,"nothing":null,"object":{}}
        """#

    static func bound(_ claim: String, _ globs: [String]) -> JWTRefusal? {
        var policy = policy
        policy.boundClaims = [.init(claim: claim, globs: globs)]
        return check(kubernetesClaims, policy)
    }

    @Test func boundClaimsByPointer() {
        #expect(Self.bound("/kubernetes.io/namespace", ["prod"]) == nil)
        #expect(Self.bound("/kubernetes.io/namespace", ["staging", "pro*"]) == nil)
        #expect(Self.bound("/kubernetes.io/namespace", ["staging"]) == .claim("/kubernetes.io/namespace"))
        #expect(Self.bound("/kubernetes.io/serviceaccount/name", ["api"]) == nil)
        #expect(
            Self.bound("/kubernetes.io/serviceaccount/missing", ["*"])
                == .claim("/kubernetes.io/serviceaccount/missing"))
        // ~1 is "/", ~0 is "~" (RFC 6901 §4).
        #expect(Self.bound("/a~1b/c~0d", ["slash and tilde"]) == nil)
        #expect(Self.bound("/a/b/c~0d", ["*"]) == .claim("/a/b/c~0d"))
        #expect(Self.bound("/a~1b/c~d", ["*"]) == .claim("/a~1b/c~d"))  // not a pointer: `~d`
        #expect(Self.bound("/groups/1", ["ops"]) == nil)
        #expect(Self.bound("/groups/01", ["ops"]) == .claim("/groups/01"))
        #expect(Self.bound("/groups/2", ["*"]) == .claim("/groups/2"))
        // A top-level name is not a pointer, slashes and all.
        #expect(Self.bound("kubernetes.io/namespace", ["*"]) == .claim("kubernetes.io/namespace"))
        #expect(Self.bound("a/b", ["*"]) == .claim("a/b"))  // an object never matches
    }

    @Test func boundClaimsByType() {
        #expect(Self.bound("groups", ["ops"]) == nil)  // any element of an array
        #expect(Self.bound("groups", ["qa", "d*"]) == nil)
        #expect(Self.bound("groups", ["qa"]) == .claim("groups"))
        #expect(Self.bound("level", ["3"]) == nil)  // a number by its JSON text
        #expect(Self.bound("level", ["4"]) == .claim("level"))
        #expect(Self.bound("ratio", ["0.5"]) == nil)
        #expect(Self.bound("admin", ["false"]) == nil)
        #expect(Self.bound("admin", ["true"]) == .claim("admin"))
        #expect(Self.bound("nothing", ["*"]) == .claim("nothing"))
        #expect(Self.bound("object", ["*"]) == .claim("object"))
        #expect(Self.bound("missing", ["*"]) == .claim("missing"))
        #expect(Self.bound("sub", []) == .claim("sub"))  // no glob: nothing matches
    }

    /// All bound claims must hold; the refusal names the first that does not, never its value.
    @Test func everyBoundClaimMustHold() {
        var policy = Self.policy
        policy.boundClaims = [
            .init(claim: "/kubernetes.io/namespace", globs: ["prod"]),
            .init(claim: "/kubernetes.io/pod/name", globs: ["web-*"]),
            .init(claim: "level", globs: ["9"]),
        ]
        let refused = Self.check(Self.kubernetesClaims, policy)
        #expect(refused == .claim("/kubernetes.io/pod/name"))
        #expect(refused?.detail == "claim /kubernetes.io/pod/name")
        #expect(refused?.detail.contains("api-7d9") == false)
    }

    // MARK: Glob

    @Test(arguments: [
        ("", "", true), ("", "a", false), ("*", "", true), ("*", "anything", true), ("**", "", true),
        ("abc", "abc", true), ("abc", "abcd", false), ("abc", "ab", false), ("abc", "ABC", false),
        ("a*", "a", true), ("a*", "abc", true), ("a*", "ba", false), ("*c", "abc", true), ("*c", "abcd", false),
        ("a*b*c", "abc", true), ("a*b*c", "axxbyyc", true), ("a*b*c", "acb", false), ("a*b*c", "abcbc", true),
        ("a*b*c", "ab", false), ("*a*", "bab", true), ("*a*", "bbb", false),
        ("?", "a", false), ("[a]", "a", false), ("a.c", "abc", false),  // only `*` is special
        ("caf\u{E9}", "cafe\u{301}", false), ("caf*", "cafe\u{301}", true),  // bytes, not Unicode equivalence
    ])
    func glob(_ pattern: String, _ text: String, _ matches: Bool) {
        #expect(Glob(pattern).matches(text) == matches)
    }

    /// The pattern that makes a backtracking matcher take exponential time completes (the
    /// two-pointer match is bounded by pattern length × text length).
    @Test func pathologicalGlobCompletes() {
        let text = String(repeating: "a", count: 100_000)
        #expect(!Glob("a*a*a*a*a*a*b").matches(text))
        #expect(Glob("a*a*a*a*a*a*a").matches(text))
        #expect(!Glob(String(repeating: "*a", count: 20) + "b").matches(String(repeating: "a", count: 5_000)))
    }

    // MARK: JSON pointer

    @Test func jsonPointerTokens() {
        #expect(JSONPointer("/kubernetes.io/namespace").tokens == ["kubernetes.io", "namespace"])
        #expect(JSONPointer("/a~1b/c~0d/~01").tokens == ["a/b", "c~d", "~1"])
        #expect(JSONPointer("/").tokens == [""])
        #expect(JSONPointer("//").tokens == ["", ""])
        #expect(JSONPointer("a/b").tokens == nil)
        #expect(JSONPointer("/a~").tokens == nil)
        #expect(JSONPointer("/a~2").tokens == nil)
        #expect(JSONPointer("/").resolve(in: Self.claims(#"{"":1}"#)) == .integer(1))
    }
}
