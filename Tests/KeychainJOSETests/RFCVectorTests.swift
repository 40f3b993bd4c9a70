import Foundation
import KeychainAPI
import Testing

@testable import KeychainJOSE

/// The JWS examples of RFC 7515 Appendix A, RFC 7520 §4 and RFC 8037 A.4 (Vectors/rfc-vectors.json).
@Suite struct RFCVectorTests {
    /// RFC 7515 A.2 and A.3: JWTs (iss "joe", exp 1300819380), verified and their claims checked.
    @Test(arguments: [("rfc7515-A.2", JWSAlgorithm.rs256), ("rfc7515-A.3", .es256)])
    func rfc7515JWTsVerify(section: String, algorithm: JWSAlgorithm) throws {
        let keys = try Vectors.rfcKeys(section)
        let jws = try CompactJWS(parsing: Vectors.rfcToken(section))
        try JWSVerifier.verify(jws, keys: keys, allowed: [algorithm])
        #expect(jws.claims["iss"] == .string("joe"))

        // The example has no `aud` (it is no login token): before its expiry the audience is what
        // fails; at its expiry, the expiry.
        let policy = JWTClaimsPolicy(issuer: "joe", audiences: ["keychaind"], leeway: 0)
        #expect(refusal { try policy.check(jws.claims, now: Date(timeIntervalSince1970: 1_300_819_379)) } == .audience)
        #expect(refusal { try policy.check(jws.claims, now: Date(timeIntervalSince1970: 1_300_819_380)) } == .expired)

        // Only the named algorithm: the same token is refused when it is not allowed.
        #expect(
            refusal { try JWSVerifier.verify(jws, keys: keys, allowed: allAlgorithms.subtracting([algorithm])) }
                == .algorithm)
    }

    @Test(arguments: ["rfc7515-A.2", "rfc7515-A.3"])
    func rfc7515JWTsFailWithAByteChanged(section: String) throws {
        let keys = try Vectors.rfcKeys(section)
        let token = Vectors.rfcToken(section)
        let flipped = try CompactJWS(parsing: Tokens.flippingSignatureBit(token))
        #expect(refusal { try JWSVerifier.verify(flipped, keys: keys, allowed: allAlgorithms) } == .signature)
        let renamed = try CompactJWS(
            parsing: Tokens.changingPayload(token) { payload in
                let at = payload.firstIndex(of: UInt8(ascii: "j"))!  // "joe" -> "koe"
                payload[at] = UInt8(ascii: "k")
            })
        #expect(renamed.claims["iss"] == .string("koe"))
        #expect(refusal { try JWSVerifier.verify(renamed, keys: keys, allowed: allAlgorithms) } == .signature)
    }

    /// A.1 (HS256) and A.4 (ES512) are algorithms keychaind does not verify; A.5 (`none`) has an
    /// empty signature, refused when parsing.
    @Test func rfc7515UnverifiedAlgorithmsAreRefused() throws {
        for section in ["rfc7515-A.1", "rfc7515-A.4"] {
            let jws = try CompactJWS(parsing: Vectors.rfcToken(section), payload: .opaque)
            #expect(refusal { try JWSVerifier.verify(jws, keys: [], allowed: allAlgorithms) } == .algorithm)
        }
        // A.1's key is an `oct` key and A.4's a P-521 one: neither is a key we read (skipped, not errors).
        #expect(try Vectors.rfcKeys("rfc7515-A.1").isEmpty)
        #expect(try Vectors.rfcKeys("rfc7515-A.4").isEmpty)
        #expect(refusal { _ = try CompactJWS(parsing: Vectors.rfcToken("rfc7515-A.5")) } == .malformed)
    }

    /// RFC 7520 §4.1 (RS256) and §4.2 (PS384, probabilistic: verified, not reproduced); their
    /// payload is text, not claims, so they are parsed as opaque JWSs.
    @Test(arguments: [("rfc7520-4.1", JWSAlgorithm.rs256), ("rfc7520-4.2", .ps384)])
    func rfc7520SignaturesVerify(section: String, algorithm: JWSAlgorithm) throws {
        let keys = try Vectors.rfcKeys(section)
        #expect(keys.count == 1 && keys[0].keyID == "bilbo.baggins@hobbiton.example" && keys[0].use == "sig")
        let token = Vectors.rfcToken(section)
        let jws = try CompactJWS(parsing: token, payload: .opaque)
        #expect(jws.keyID == "bilbo.baggins@hobbiton.example")
        try JWSVerifier.verify(jws, keys: keys, allowed: [algorithm])
        let flipped = try CompactJWS(parsing: Tokens.flippingSignatureBit(token), payload: .opaque)
        #expect(refusal { try JWSVerifier.verify(flipped, keys: keys, allowed: [algorithm]) } == .signature)
        // As a JWT it is malformed: the payload is not a JSON object.
        #expect(refusal { _ = try CompactJWS(parsing: token) } == .malformed)
    }

    @Test func rfc7520ES512IsRefused() throws {
        #expect(try Vectors.rfcKeys("rfc7520-4.3").isEmpty)  // a P-521 key: skipped
        let jws = try CompactJWS(parsing: Vectors.rfcToken("rfc7520-4.3"), payload: .opaque)
        #expect(refusal { try JWSVerifier.verify(jws, keys: [], allowed: allAlgorithms) } == .algorithm)
    }

    @Test func rfc8037Ed25519SignatureVerifies() throws {
        let keys = try Vectors.rfcKeys("rfc8037-A.4")
        #expect(keys.map(\.kind) == [.ed25519])
        let token = Vectors.rfcToken("rfc8037-A.4")
        try JWSVerifier.verify(try CompactJWS(parsing: token, payload: .opaque), keys: keys, allowed: [.edDSA])
        let flipped = try CompactJWS(parsing: Tokens.flippingSignatureBit(token), payload: .opaque)
        #expect(refusal { try JWSVerifier.verify(flipped, keys: keys, allowed: [.edDSA]) } == .signature)
    }

    /// The RFC 7515 keys come with their private members, as the RFC prints them: they are used
    /// by their public part.
    @Test func privateMembersAreNotRead() throws {
        #expect(try Vectors.rfcKeys("rfc7515-A.2").map(\.kind) == [.rsa(bits: 2048)])
        #expect(try Vectors.rfcKeys("rfc7515-A.3").map(\.kind) == [.p256])
    }
}
