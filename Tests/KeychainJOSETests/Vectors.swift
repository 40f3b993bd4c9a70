import Foundation
import KeychainAPI
import KeychainCore
import Testing

@testable import KeychainJOSE

/// The vector files under Vectors/ (their makers say where the bytes come from).
enum Vectors {
    static func load(_ name: String) throws -> JSONValue {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Vectors"))
        return try JSONValue.parse(Array(try Data(contentsOf: url)))
    }

    /// rfc-vectors.json: RFC 7515, 7520 and 8037 examples, by section.
    static let rfc = try! load("rfc-vectors")
    /// pyjwt-vectors.json: keys and tokens PyJWT made.
    static let pyjwt = try! load("pyjwt-vectors")

    static func rfcToken(_ section: String) -> String { rfc[section]!["token"]!.stringValue! }

    static func rfcKeys(_ section: String) throws -> [VerificationKey] {
        try JWKSet.parse(rfc[section]!["jwks"]!.serialized())
    }

    static func pyjwtKeys() throws -> [VerificationKey] { try JWKSet.parse(pyjwt["jwks"]!.serialized()) }
}

/// Test helpers on tokens.
enum Tokens {
    /// `token` with one bit of its signature's first byte flipped.
    static func flippingSignatureBit(_ token: String) -> String {
        var segments = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var signature = Base64URL.decode(segments[2])!
        signature[0] ^= 1
        segments[2] = signature.withUnsafeBytes { Base64URL.encode($0) }
        return segments.joined(separator: ".")
    }

    /// `token` with `replace` applied to its payload's bytes (the signature kept).
    static func changingPayload(_ token: String, _ replace: (inout [UInt8]) -> Void) -> String {
        var segments = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var payload = Base64URL.decode(segments[1])!
        replace(&payload)
        segments[1] = payload.withUnsafeBytes { Base64URL.encode($0) }
        return segments.joined(separator: ".")
    }

    /// A token of the given header and payload JSON texts and signature bytes (unsigned: for parsing tests).
    static func make(header: String, payload: String = #"{"iss":"a"}"#, signature: [UInt8] = [1, 2, 3]) -> String {
        [Array(header.utf8), Array(payload.utf8), signature].map { bytes in
            bytes.withUnsafeBytes { Base64URL.encode($0) }
        }
        .joined(separator: ".")
    }
}

/// The refusal `body` throws, nil when it throws none (any other error is an issue).
func refusal(_ body: () throws -> Void) -> JWTRefusal? {
    do {
        try body()
        return nil
    } catch let refusal as JWTRefusal {
        return refusal
    } catch {
        Issue.record("not a refusal: \(error)")
        return nil
    }
}

let allAlgorithms = Set(JWSAlgorithm.allCases)
