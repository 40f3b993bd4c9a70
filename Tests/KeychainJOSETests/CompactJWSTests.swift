import KeychainAPI
import KeychainCore
import Testing

@testable import KeychainJOSE

/// What `CompactJWS(parsing:)` refuses, and what it keeps.
@Suite struct CompactJWSTests {
    @Test func keepsHeaderFieldsClaimsAndSigningInput() throws {
        let token = Tokens.make(header: #"{"alg":"ES256","kid":"k1","typ":"JWT","x5u":"https://x","jku":"https://y"}"#)
        let jws = try CompactJWS(parsing: token)
        #expect(jws.algorithm == "ES256" && jws.keyID == "k1" && jws.type == "JWT")
        #expect(jws.claims == .object([("iss", .string("a"))]))
        #expect(jws.signature == [1, 2, 3])
        #expect(
            jws.signingInput == Array(token.utf8.prefix(while: { $0 != UInt8(ascii: ".") })) + [UInt8(ascii: ".")]
                + Array(token.split(separator: ".")[1].utf8))
    }

    @Test(arguments: [
        // Not three segments: two, four, JWE's five.
        "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJhIn0",
        "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJhIn0.AQID.AQID",
        "eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZHQ00ifQ.AQID.AQID.AQID.AQID",
        // The JSON serialization.
        #"{"payload":"eyJpc3MiOiJhIn0","protected":"eyJhbGciOiJSUzI1NiJ9","signature":"AQID"}"#,
        // An empty signature, padding, standard base64's alphabet, spaces, bits past the last byte.
        "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJhIn0.",
        "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJhIn0.AQI=",
        "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJhIn0.+/8",
        "eyJhbGciOiJSUzI1NiJ9 .eyJpc3MiOiJhIn0.AQID",
        "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJhIn0.AQJ",
        "eyJhbGciOiJSUzI1NiJ9=.eyJpc3MiOiJhIn0.AQID",
        "",
        "..",
    ])
    func refusesWhatIsNotACompactJWS(_ token: String) {
        #expect(refusal { _ = try CompactJWS(parsing: token) } == .malformed)
    }

    @Test(arguments: [
        #"["alg","RS256"]"#,  // not an object
        #"{"alg":"RS256","alg":"ES256"}"#,  // duplicate members
        #"{"typ":"JWT"}"#,  // no alg
        #"{"alg":null}"#,
        #"{"alg":["RS256"]}"#,
        #"{"alg":"RS256","crit":["exp"],"exp":1}"#,
        #"{"alg":"RS256","crit":[]}"#,
        #"{"alg":"RS256","b64":false,"crit":["b64"]}"#,
        #"{"alg":"RS256","b64":false}"#,
        #"{"alg":"RS256","b64":true}"#,
        #"{"alg":"RS256","kid":7}"#,
        #"{"alg":"RS256","typ":1}"#,
        #"{"alg":"RS256"} x"#,
    ])
    func refusesHeaders(_ header: String) {
        #expect(refusal { _ = try CompactJWS(parsing: Tokens.make(header: header)) } == .malformed)
    }

    @Test(arguments: [#"["iss"]"#, #""text""#, "", "null", #"{"iss":"a","iss":"b"}"#, "Payload"])
    func refusesPayloadsThatAreNotClaims(_ payload: String) {
        #expect(
            refusal { _ = try CompactJWS(parsing: Tokens.make(header: #"{"alg":"RS256"}"#, payload: payload)) }
                == .malformed)
    }

    @Test func boundsKeyIDAndLength() throws {
        let longest = String(repeating: "k", count: CompactJWS.maximumKeyIDLength)
        #expect(try CompactJWS(parsing: Tokens.make(header: #"{"alg":"RS256","kid":"\#(longest)"}"#)).keyID == longest)
        #expect(
            refusal { _ = try CompactJWS(parsing: Tokens.make(header: #"{"alg":"RS256","kid":"\#(longest)k"}"#)) }
                == .malformed)
        // Counted in UTF-8 bytes: 128 two-byte characters fit, 129 do not.
        #expect(
            try CompactJWS(
                parsing: Tokens.make(header: #"{"alg":"RS256","kid":"\#(String(repeating: "é", count: 128))"}"#)
            ).keyID != nil)
        #expect(
            refusal {
                _ = try CompactJWS(
                    parsing: Tokens.make(header: #"{"alg":"RS256","kid":"\#(String(repeating: "é", count: 129))"}"#))
            } == .malformed)

        let padding = String(repeating: "a", count: 13_000)
        let big = Tokens.make(header: #"{"alg":"RS256"}"#, payload: #"{"iss":"a","pad":"\#(padding)"}"#)
        #expect(big.utf8.count > CompactJWS.maximumLength)
        #expect(refusal { _ = try CompactJWS(parsing: big) } == .malformed)
    }

    /// The key-carrying header members are never used: a token naming its own key in `jwk`
    /// verifies against the role's keys only (PyJWTVectorTests has one signed by that key).
    @Test func headerKeysAreIgnored() throws {
        let jws = try CompactJWS(
            parsing: Tokens.make(
                header:
                    #"{"alg":"EdDSA","jwk":{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}}"#
            ))
        #expect(refusal { try JWSVerifier.verify(jws, keys: [], allowed: allAlgorithms) } == .signature)
    }

    @Test func refusalDetails() {
        let details: [(JWTRefusal, String)] = [
            (.malformed, "malformed token"), (.algorithm, "algorithm"), (.unknownKeyID, "signature"),
            (.signature, "signature"), (.issuer, "issuer"), (.audience, "audience"), (.expired, "expired"),
            (.notYetValid, "not yet valid"), (.subject, "subject"),
            (.claim("/kubernetes.io/namespace"), "claim /kubernetes.io/namespace"),
        ]
        for (refusal, detail) in details { #expect(refusal.detail == detail) }
    }
}
