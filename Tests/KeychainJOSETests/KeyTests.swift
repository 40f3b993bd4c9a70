import Foundation
import KeychainAPI
import KeychainCore
import Testing

@testable import KeychainJOSE

/// JWK sets, PEM keys, and which keys a token's algorithm may use.
@Suite struct KeyTests {
    /// The PyJWT set's JWK of `kid`, with `extra` members set.
    static func jwk(_ kid: String, _ extra: [(String, JSONValue)] = []) -> JSONValue {
        guard case .array(let keys)? = Vectors.pyjwt["jwks"]?["keys"],
            case .object(var members)? = keys.first(where: { $0["kid"] == .string(kid) })
        else { fatalError("no key \(kid)") }
        for (name, value) in extra {
            members.removeAll { $0.0 == name }
            members.append((name, value))
        }
        return .object(members)
    }

    static func set(_ keys: [JSONValue]) -> [UInt8] { JSONValue.object([("keys", .array(keys))]).serialized() }

    static func token(_ name: String) -> CompactJWS {
        try! CompactJWS(parsing: PyJWTVectorTests.cases.first { $0.name == name }!.token)
    }

    // MARK: JWK sets

    @Test(arguments: [#"[]"#, #"{}"#, #"{"keys":{}}"#, #"{"keys":"x"}"#, "", "not json", #"{"keys":[],"keys":[]}"#])
    func refusesWhatIsNotASet(_ document: String) {
        #expect(throws: KeyImportError.self) { try JWKSet.parse(Array(document.utf8)) }
    }

    @Test func skipsKeysItDoesNotVerifyWith() throws {
        let document = #"""
            {"keys":[
              {"kty":"oct","k":"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T"},
              {"kty":"EC","crv":"P-521","x":"AQ","y":"AQ"},
              {"kty":"EC","crv":"secp256k1","x":"AQ","y":"AQ"},
              {"kty":"OKP","crv":"X25519","x":"AQ"},
              {"kty":"OKP","crv":"Ed448","x":"AQ"},
              {"kty":"RSA-PSS"},
              {"kty":"RSA","kid":"kept","n":"ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ","e":"AQAB"}
            ]}
            """#
        let keys = try JWKSet.parse(Array(document.utf8))
        #expect(keys.map(\.keyID) == ["kept"])
        #expect(keys.map(\.kind) == [.rsa(bits: 2048)])
        #expect(try JWKSet.parse(Array(#"{"keys":[]}"#.utf8)).isEmpty)
    }

    /// A broken key of a type we read refuses the whole set, naming its position, never its bytes.
    @Test func refusesBrokenKeys() throws {
        let p256 = Self.jwk("p256")
        guard case .string(let y)? = p256["y"] else {
            Issue.record("no y")
            return
        }
        var yBytes = Array(y.utf8)
        // The last character's low bit: y ± 1, a point off the curve.
        yBytes[yBytes.count - 1] = yBytes.last! == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let offCurve = Self.jwk("p256", [("y", .string(String(decoding: yBytes, as: UTF8.self)))])
        let broken: [JSONValue] = [
            offCurve,
            Self.jwk("p256", [("x", .string("AQ"))]),  // too short
            Self.jwk("p384", [("crv", .string("P-256"))]),  // coordinates of the wrong length
            Self.jwk("p256", [("crv", .integer(1))]),
            Self.jwk("rsa", [("n", .string("not base64!"))]),
            Self.jwk("rsa", [("e", .null)]),
            Self.jwk("rsa", [("e", .string("AQA"))]),  // e = 256: even, OpenSSL's check refuses it
            Self.jwk("ed25519", [("x", .string("AQ"))]),
            Self.jwk("rsa", [("kid", .integer(1))]),
            Self.jwk("rsa", [("use", .bool(true))]),
            .object([("n", .string("AQAB"))]),  // no kty
            .string("RSA"),
        ]
        for (index, key) in broken.enumerated() {
            let error = #expect(throws: KeyImportError.self, "\(index)") {
                try JWKSet.parse(Self.set([Self.jwk("rsa"), key]))
            }
            #expect(error?.description.hasPrefix("key 1: ") == true, "\(index): \(error?.description ?? "")")
        }
        // The key itself, unchanged, is fine.
        #expect(try JWKSet.parse(Self.set([p256])).map(\.kind) == [.p256])
    }

    // MARK: PEM

    @Test func refusesPEMsThatAreNotSupportedPublicKeys() {
        let ed448 = """
            -----BEGIN PUBLIC KEY-----
            MEMwBQYDK2VxAzoAcAQ3zAOkdmXLEGMEVOS5fulJG+uXiM4ycPtYYeUH3rzvAVb7
            yEorlQCgU0Q6nB8w5CIbl8exIKkA
            -----END PUBLIC KEY-----
            """
        let p521 = """
            -----BEGIN PUBLIC KEY-----
            MIGbMBAGByqGSM49AgEGBSuBBAAjA4GGAAQBY9gj4nX47+zQftkIpYmaHp9ouHbm
            vDQ53CBbi0yGAXP0HxzTSwK4r2MZqZK8W9LznLMh9s7CbOtcJRoVrdeetoIAbRnp
            Pb8gU80Ey9/ZS+dPN+TImsMatMV2D3S04qizW/PWS7ggC91sx1BoyuUgJiEb9jQ+
            ++XgQLhgxv4RPQB+ZX8=
            -----END PUBLIC KEY-----
            """
        let rsa = Vectors.pyjwt["pem"]!["rsa"]!.stringValue!
        for pem in [
            ed448, p521, "", "not a key",
            rsa.replacingOccurrences(of: "PUBLIC KEY", with: "PRIVATE KEY"),
            rsa.replacingOccurrences(of: "MII", with: "MIJ"),
        ] {
            #expect(throws: KeyImportError.self) { try VerificationKey.parsePEM(pem) }
        }
        // Made by OpenSSL 3 (`openssl genpkey -algorithm ed448 | openssl pkey -pubout`), as the
        // P-521 key; both refused for their type, not their encoding.
        #expect(throws: KeyImportError("not an RSA, P-256, P-384 or Ed25519 public key")) {
            try VerificationKey.parsePEM(ed448)
        }
        #expect(throws: KeyImportError("not an RSA, P-256, P-384 or Ed25519 public key")) {
            try VerificationKey.parsePEM(p521)
        }
    }

    // MARK: Key fit

    @Test func fitByTypeAndSize() throws {
        let keys = try Vectors.pyjwtKeys()
        func fitting(_ algorithm: JWSAlgorithm) -> [String?] { keys.filter { $0.fits(algorithm) }.map(\.keyID) }
        for algorithm in [JWSAlgorithm.rs256, .rs384, .rs512, .ps256, .ps384, .ps512] {
            #expect(fitting(algorithm) == ["rsa"])  // not the 1024-bit one
        }
        #expect(fitting(.es256) == ["p256"])
        #expect(fitting(.es384) == ["p384"])
        #expect(fitting(.edDSA) == ["ed25519"])
    }

    /// The refusals of the 1024-bit key and of ES256 by the P-384 key are the fit rule's: the
    /// signatures themselves are sound, as OpenSSL says when asked directly.
    @Test func unfitKeysWouldHaveVerified() throws {
        let keys = try Vectors.pyjwtKeys()
        let small = Self.token("RS256 by a 1024-bit key")
        #expect(JWSVerifier.verifies(small.signature, of: small.signingInput, .rs256, keys[1]))
        let es256 = Self.token("ES256 by the P-384 key")
        #expect(JWSVerifier.verifies(es256.signature, of: es256.signingInput, .es256, keys[3]))
        #expect(keys[1].kind == .rsa(bits: 1024) && !keys[1].fits(.rs256))
        #expect(keys[3].kind == .p384 && !keys[3].fits(.es256))
    }

    @Test func jwkAlgorithmMustBeTheHeaders() throws {
        let keys = try JWKSet.parse(Self.set([Self.jwk("rsa", [("alg", .string("RS512"))])]))
        #expect(
            refusal { try JWSVerifier.verify(Self.token("RS256 with kid"), keys: keys, allowed: allAlgorithms) }
                == .signature)
        try JWSVerifier.verify(Self.token("RS512 with kid"), keys: keys, allowed: allAlgorithms)
        // By bytes: "rs512" is not "RS512".
        let lower = try JWKSet.parse(Self.set([Self.jwk("rsa", [("alg", .string("rs512"))])]))
        #expect(
            refusal { try JWSVerifier.verify(Self.token("RS512 with kid"), keys: lower, allowed: allAlgorithms) }
                == .signature)
    }

    @Test func encryptionKeysAreNotTried() throws {
        let enc = try JWKSet.parse(Self.set([Self.jwk("rsa", [("use", .string("enc"))])]))
        #expect(
            refusal { try JWSVerifier.verify(Self.token("RS256 with kid"), keys: enc, allowed: allAlgorithms) }
                == .signature)
        #expect(
            refusal { try JWSVerifier.verify(Self.token("RS256 without kid"), keys: enc, allowed: allAlgorithms) }
                == .signature)
        let sig = try JWKSet.parse(Self.set([Self.jwk("rsa", [("use", .string("sig"))])]))
        try JWSVerifier.verify(Self.token("RS256 with kid"), keys: sig, allowed: allAlgorithms)
    }

    @Test func withoutKidEveryKeyIsTried() throws {
        // The right key last, behind keys of every other kind.
        let keys = try JWKSet.parse(Self.set(["ed25519", "p384", "rsa-small", "p256", "rsa"].map { Self.jwk($0) }))
        try JWSVerifier.verify(Self.token("PS512 without kid"), keys: keys, allowed: allAlgorithms)
        try JWSVerifier.verify(Self.token("ES256 without kid"), keys: keys, allowed: allAlgorithms)
    }

    @Test func unknownKeyIDIsItsOwnOutcome() throws {
        let keys = try Vectors.pyjwtKeys()
        #expect(
            refusal {
                try JWSVerifier.verify(Self.token("RS256 with an unknown kid"), keys: keys, allowed: allAlgorithms)
            } == .unknownKeyID)
        // An empty set: every kid is unknown.
        #expect(
            refusal { try JWSVerifier.verify(Self.token("RS256 with kid"), keys: [], allowed: allAlgorithms) }
                == .unknownKeyID)
        #expect(
            refusal { try JWSVerifier.verify(Self.token("RS256 without kid"), keys: [], allowed: allAlgorithms) }
                == .signature)
        // A key without kid is a candidate for any kid.
        let unnamed = try JWKSet.parse(
            Self.set(
                [Self.jwk("rsa", [("kid", .null)])].map { key in
                    guard case .object(let members) = key else { return key }
                    return .object(members.filter { $0.0 != "kid" })
                }))
        #expect(unnamed.map(\.keyID) == [nil])
        try JWSVerifier.verify(Self.token("RS256 with an unknown kid"), keys: unnamed, allowed: allAlgorithms)
        // A kid matches by bytes, not by Unicode equivalence.
        #expect(
            refusal {
                try JWSVerifier.verify(
                    Self.token("RS256 with kid"),
                    keys: try! JWKSet.parse(Self.set([Self.jwk("rsa", [("kid", .string("RSA"))])])),
                    allowed: allAlgorithms)
            } == .unknownKeyID)
    }

    @Test func algorithmMustBeAllowed() throws {
        let keys = try Vectors.pyjwtKeys()
        #expect(
            refusal { try JWSVerifier.verify(Self.token("RS256 with kid"), keys: keys, allowed: [.ps256, .es256]) }
                == .algorithm)
        #expect(refusal { try JWSVerifier.verify(Self.token("RS256 with kid"), keys: keys, allowed: []) } == .algorithm)
        for alg in ["none", "HS256", "ES512", "rs256", "RS256 ", "EDDSA", "Ed25519"] {
            let jws = try CompactJWS(parsing: Tokens.make(header: #"{"alg":"\#(alg)"}"#))
            #expect(refusal { try JWSVerifier.verify(jws, keys: keys, allowed: allAlgorithms) } == .algorithm)
        }
    }

    /// ECDSA signatures are R || S of the curve's length: DER, or one byte more or less, fail.
    @Test func ecdsaSignatureLength() throws {
        #expect(JWSVerifier.derECDSASignature([UInt8](repeating: 1, count: 63), coordinateLength: 32) == nil)
        #expect(JWSVerifier.derECDSASignature([UInt8](repeating: 1, count: 65), coordinateLength: 32) == nil)
        #expect(JWSVerifier.derECDSASignature([UInt8](repeating: 1, count: 96), coordinateLength: 32) == nil)
        let der = try #require(JWSVerifier.derECDSASignature([UInt8](repeating: 1, count: 64), coordinateLength: 32))
        #expect(der.first == 0x30 && der.count == 2 + 2 * (2 + 32))

        let keys = try Vectors.pyjwtKeys()
        let token = PyJWTVectorTests.cases.first { $0.name == "ES256 with kid" }!.token
        for change in [{ (s: inout [UInt8]) in s.removeLast() }, { $0.append(0) }] {
            var segments = token.split(separator: ".").map(String.init)
            var signature = Base64URL.decode(segments[2])!
            change(&signature)
            segments[2] = signature.withUnsafeBytes { Base64URL.encode($0) }
            let jws = try CompactJWS(parsing: segments.joined(separator: "."))
            #expect(refusal { try JWSVerifier.verify(jws, keys: keys, allowed: allAlgorithms) } == .signature)
        }
    }
}
