import Foundation
import KeychainAPI
import KeychainCore
import KeychainTestSupport
import Testing

/// The token routes' requests: naming from the query string, the PUT body.
struct TokenRequestTests {
    @Test(arguments: [
        [("accessToken", JSONValue.string("x")), ("other", .integer(1))],
        [("accessToken", .integer(1))],
        [("refreshToken", .string("r"))],
        [("accessToken", .string("x")), ("expiresIn", .integer(0))],
        [("accessToken", .string("x")), ("expiresIn", .integer(5)), ("expiresAt", .string("2030-01-01T00:00:00Z"))],
        [("accessToken", .string("x")), ("accessToken", .string("y"))],
    ] as [[(String, JSONValue)]])
    func badBodiesAreErrSecParam(members: [(String, JSONValue)]) {
        #expect(status { try TokenPutRequest(decoding: JSONBody(members)) } == .param)
    }

    @Test func expiresInCountsFromNowAndExpiresAtIsCutToMilliseconds() throws {
        let now = Date(timeIntervalSince1970: 1_795_255_200.1234)
        let relative = try TokenPutRequest(decoding: JSONBody([("accessToken", .string("a")), ("expiresIn", .integer(60))]))
        #expect(relative.update(now: now).expiresAt == now.addingTimeInterval(60).truncatedToMilliseconds)
        let absolute = try TokenPutRequest(
            decoding: JSONBody([("accessToken", .string("a")), ("expiresAt", .string("2026-11-21T11:00:00.1239+01:00"))]))
        #expect(absolute.update(now: now).expiresAt == Date(timeIntervalSince1970: 1_795_255_200.123))
        #expect(status {
            try TokenPutRequest(decoding: JSONBody([("expiresIn", .integer(5)), ("expiresAt", .string("x"))]))
        } == .param)
    }

    /// What the client encodes decodes to the same request.
    @Test(arguments: [TokenUpdate.Refresh.keep, .set("r1"), .remove])
    func encodedBodiesDecodeToTheSameRequest(refresh: TokenUpdate.Refresh) throws {
        let expiresAt = Date(timeIntervalSince1970: 1_795_255_200.123)
        for request in [
            TokenPutRequest(accessToken: "a\"1", refresh: refresh),
            TokenPutRequest(accessToken: "a", refresh: refresh, expiresIn: 3600),
            TokenPutRequest(accessToken: "a", refresh: refresh, expiresAt: expiresAt),
        ] {
            let decoded = try TokenPutRequest(decoding: JSONBody(parsing: request.encoded()))
            #expect(decoded.accessToken == request.accessToken && decoded.refresh == request.refresh)
            #expect(decoded.expiresIn == request.expiresIn && decoded.expiresAt == request.expiresAt)
        }
    }

    @Test func namingFromTheQueryString() throws {
        let naming = try TokenNaming(
            service: "api", decoding: [QueryParameter(name: "user", value: "gus"), QueryParameter(name: "accessGroup", value: "g")])
        #expect(naming == TokenNaming(service: "api", user: "gus", accessGroup: "g"))
        #expect(try TokenNaming(service: "api", decoding: naming.queryParameters) == naming)
        #expect(throws: KeychainError.param("the service in the path is empty")) {
            try TokenNaming(service: "", decoding: [])
        }
        #expect(throws: KeychainError.param("unknown parameter \"limit\"; the token routes take user and accessGroup")) {
            try TokenNaming(service: "api", decoding: [QueryParameter(name: "limit", value: "1")])
        }
        #expect(status { try TokenNaming(service: "api", decoding: [QueryParameter(name: "user", value: "")]) } == .param)
    }
}
