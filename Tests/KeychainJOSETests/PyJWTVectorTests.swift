import KeychainCore
import Foundation
import KeychainAPI
import Testing

@testable import KeychainJOSE

/// Tokens and keys made by PyJWT 2.6 (Vectors/make-pyjwt-vectors.py, pyjwt-vectors.json).
@Suite struct PyJWTVectorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let token: String
        let expect: String
        var testDescription: String { name }
    }

    static let cases: [Case] = {
        guard case .array(let tokens)? = Vectors.pyjwt["tokens"] else { return [] }
        return tokens.map {
            Case(name: $0["name"]!.stringValue!, token: $0["token"]!.stringValue!, expect: $0["expect"]!.stringValue!)
        }
    }()

    /// What keychaind answers for a token with every algorithm allowed and the whole key set.
    static func outcome(_ token: String, keys: [VerificationKey]) -> String {
        do throws(JWTRefusal) {
            try JWSVerifier.verify(try CompactJWS(parsing: token), keys: keys, allowed: allAlgorithms)
            return "valid"
        } catch {
            return switch error {
            case .malformed: "malformed"
            case .algorithm: "algorithm"
            case .unknownKeyID: "unknownKeyID"
            case .signature: "signature"
            default: "claims?"
            }
        }
    }

    @Test(arguments: PyJWTVectorTests.cases)
    func token(_ vector: Case) throws {
        #expect(Self.outcome(vector.token, keys: try Vectors.pyjwtKeys()) == vector.expect)
    }

    @Test func everyCaseIsHere() {
        #expect(Self.cases.count == 29)
        #expect(Self.cases.filter { $0.expect == "valid" }.count == 18)
    }

    /// The valid tokens fail with one bit of their signature flipped.
    @Test(arguments: PyJWTVectorTests.cases.filter { $0.expect == "valid" })
    func flippedSignatureFails(_ vector: Case) throws {
        let keys = try Vectors.pyjwtKeys()
        #expect(Self.outcome(Tokens.flippingSignatureBit(vector.token), keys: keys) == "signature")
    }

    @Test func keySetIsRead() throws {
        let keys = try Vectors.pyjwtKeys()
        #expect(keys.map(\.keyID) == ["rsa", "rsa-small", "p256", "p384", "ed25519"])
        #expect(keys.map(\.kind) == [.rsa(bits: 2048), .rsa(bits: 1024), .p256, .p384, .ed25519])
    }

    /// The same keys as PEM: the tokens without `kid` verify with them (a PEM key has no `kid`,
    /// so it is a candidate for every token, with or without one).
    @Test func pemKeysVerify() throws {
        let pems = try #require(Vectors.pyjwt["pem"])
        let keys = try ["rsa", "p256", "p384", "ed25519"].map { try VerificationKey.parsePEM(pems[$0]!.stringValue!) }
        #expect(keys.map(\.kind) == [.rsa(bits: 2048), .p256, .p384, .ed25519])
        #expect(keys.allSatisfy { $0.keyID == nil && $0.algorithm == nil && $0.use == nil })
        for vector in Self.cases where vector.expect == "valid" {
            #expect(Self.outcome(vector.token, keys: keys) == "valid", "\(vector.name)")
        }
        let small = try VerificationKey.parsePEM(pems["rsa-small"]!.stringValue!)
        #expect(small.kind == .rsa(bits: 1024))
        #expect(
            Self.outcome(Self.cases.first { $0.name == "RS256 by a 1024-bit key, no kid" }!.token, keys: [small])
                == "signature")
    }

    /// The PyJWT tokens' claims pass the policy they were made for, and fail one made for another.
    @Test func claimsOfAPyJWTToken() throws {
        let jws = try CompactJWS(parsing: Self.cases[0].token)
        let now = Date(timeIntervalSince1970: 1_700_000_100)
        let policy = JWTClaimsPolicy(
            issuer: "https://issuer.example", audiences: ["keychaind"], boundSubject: "system:serviceaccount:prod:*",
            boundClaims: [.init(claim: "/kubernetes.io/namespace", globs: ["prod", "staging"])])
        try policy.check(jws.claims, now: now)
        var elsewhere = policy
        elsewhere.boundClaims = [.init(claim: "/kubernetes.io/namespace", globs: ["staging"])]
        #expect(refusal { try elsewhere.check(jws.claims, now: now) } == .claim("/kubernetes.io/namespace"))
        #expect(refusal { try policy.check(jws.claims, now: Date(timeIntervalSince1970: 1_700_003_660)) } == .expired)
    }
}
