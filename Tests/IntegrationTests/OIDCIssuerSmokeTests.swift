import Foundation
import Testing

/// The login tests' OpenID Connect issuer (`OIDCIssuer` over `oidc_issuer.py`) serves what they
/// rely on. Only the structure of its tokens is checked here: their signatures are keychaind's
/// verifier's to check, in the login tests.
@Suite(.serialized)
struct OIDCIssuerSmokeTests {
    @Test(arguments: [false, true])
    func discoveryLeadsToTheKeySetWhoseKeysSignItsTokens(tls: Bool) throws {
        let issuer = try OIDCIssuer(tls: tls ? MetricsAndTLSTests.selfSignedCertificate() : nil)
        defer { issuer.stop() }
        let discovery = try issuer.discovery()
        #expect(discovery["issuer"] as? String == issuer.issuer)
        #expect(discovery["jwks_uri"] as? String == issuer.jwksURL)
        let keys = try issuer.keySet()
        #expect(keys.compactMap { $0["kid"] as? String } == OIDCIssuer.kids)
        #expect(keys.allSatisfy { $0["use"] as? String == "sig" })

        for alg in ["RS256", "ES256", "EdDSA"] {
            let segments = try issuer.mint(alg: alg).split(separator: ".", omittingEmptySubsequences: false)
            try #require(segments.count == 3)
            let header = try Self.decode(segments[0])
            let claims = try Self.decode(segments[1])
            #expect(header["alg"] as? String == alg)
            let jwk = try #require(keys.first { $0["kid"] as? String == header["kid"] as? String })
            #expect(jwk["alg"] as? String == alg)
            #expect(!segments[2].isEmpty)
            #expect(claims["iss"] as? String == issuer.issuer)
            #expect(claims["sub"] as? String == OIDCIssuer.subject)
            #expect(claims["aud"] as? String == OIDCIssuer.audience)
            let kubernetes = claims["kubernetes.io"] as? [String: Any]
            #expect(kubernetes?["namespace"] as? String == "payments")
        }
        #expect(try issuer.publicPEM(alg: "ES256").hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
        let stats = try issuer.stats()
        #expect(stats.jwks == 1 && stats.discovery == 1)
    }

    @Test func itsControlsChangeWhatItServesAndMints() throws {
        let issuer = try OIDCIssuer(issuerPath: "/tenant/")
        defer { issuer.stop() }
        #expect(issuer.issuer == "http://127.0.0.1:\(issuer.port)/tenant/")
        #expect(issuer.discoveryURL == "http://127.0.0.1:\(issuer.port)/tenant/.well-known/openid-configuration")
        #expect(try issuer.discovery()["issuer"] as? String == issuer.issuer)

        let rotated = try issuer.rotate(alg: "RS256", keep: false)
        let kids = try issuer.keySet().compactMap { $0["kid"] as? String }
        #expect(kids.contains(rotated) && !kids.contains("rs256"))
        let token = try issuer.mint(claims: ["sub": "other"], omit: ["exp"], kid: .omitted)
        let header = try Self.decode(token.split(separator: ".")[0])
        let claims = try Self.decode(token.split(separator: ".")[1])
        #expect(header["kid"] == nil && claims["exp"] == nil && claims["sub"] as? String == "other")
        let embedded = try Self.decode(issuer.mint(alg: "ES256", embedJWK: true).split(separator: ".")[0])
        #expect(embedded["kid"] as? String == "es256" && embedded["jwk"] is [String: Any])

        try issuer.control(jwks: "error", discoveryIssuer: "https://elsewhere.example")
        #expect(throws: ProcessFailure.self) { try issuer.keySet() }
        #expect(try issuer.discovery()["issuer"] as? String == "https://elsewhere.example")
        let stats = try issuer.stats()
        #expect(stats.jwks == 2 && stats.discovery == 2)
    }

    /// The JSON object in a base64url segment of a JWT.
    static func decode(_ segment: Substring) throws -> [String: Any] {
        var base64 = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64),
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { throw ProcessFailure(description: "not a base64url JSON object: \(segment)") }
        return object
    }
}
