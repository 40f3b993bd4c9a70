import Foundation
import KeychainAPI
@testable import KeychainClient
import KeychaindTesting
import Testing

/// The token routes of the real app (TestApp), in process, and the async client's token API
/// against the same app on a loopback port.
final class TokenRoutesTests {
    let server: TestApp
    let admin: String

    init() throws {
        server = try TestApp(.live)
        admin = server.adminToken
    }

    deinit { server.stop() }

    var http: AppHTTP { server.http }

    func newClient(_ name: String, groups: [String]) throws -> String {
        let created = try http.json("POST", "/v1/admin/clients", ["name": name, "accessGroups": groups], token: admin)
        #expect(created.status == 201)
        return try #require(created.json["token"] as? String)
    }

    func keychain(_ token: String) throws -> KeychainClient {
        try KeychainClient(baseURL: URL(string: "http://127.0.0.1:\(try #require(server.port))")!, token: token, timeout: 10)
    }

    @Test func putGetAuthorizationDeleteWithServiceAccountNaming() throws {
        let put = try http.json("PUT", "/v1/tokens/api.example.com", ["accessToken": "at-1", "refreshToken": "rt-1"], token: admin)
        #expect(put.status == 200)
        #expect(put.json["status"] as? Int == 0)

        let got = try http.send("GET", "/v1/tokens/api.example.com", token: admin)
        #expect(got.status == 200)
        #expect(got.json["accessToken"] as? String == "at-1")
        #expect(got.json["refreshToken"] as? String == "rt-1")
        #expect(got.json["expiresAt"] is NSNull)
        #expect(got.json["expired"] as? Bool == false)

        let header = try http.send("GET", "/tokens/api.example.com/authorization", token: admin)
        #expect(header.status == 200)
        #expect(header.json["Authorization"] as? String == "Bearer at-1")
        #expect(header.headers["cache-control"] == "no-store")

        // The tokens are plain generic passwords: service = {service}, account = accessToken/refreshToken.
        let items = try http.send(
            "GET", "/v1/items/genericPassword?service=api.example.com&limit=all&return=attributes,data", token: admin)
        let list = try #require(items.json["items"] as? [[String: Any]])
        #expect(list.map { $0["account"] as? String } == ["accessToken", "refreshToken"])
        #expect(list.map { $0["value"] as? String } == ["at-1", "rt-1"])
        #expect(items.headers["cache-control"] == "no-store")

        let deleted = try http.send("DELETE", "/v1/tokens/api.example.com", token: admin)
        #expect(deleted.status == 200)
        #expect(deleted.json["deleted"] as? Int == 2)
        let gone = try http.send("GET", "/v1/tokens/api.example.com", token: admin)
        #expect(gone.status == 404)
        #expect(gone.json["error"] as? String == "errSecItemNotFound")
        #expect(gone.headers["cache-control"] == "no-store")
        #expect(try http.send("GET", "/v1/tokens/api.example.com/authorization", token: admin).status == 404)
        #expect(try http.send("DELETE", "/v1/tokens/api.example.com", token: admin).status == 404)
    }

    /// The schemathesis case that once answered `{"Authorization":"Bearer "}`: an access token
    /// added through the item routes with no value.
    @Test func anEmptyAccessTokenStoredAsAnItemIsNoAuthorization() async throws {
        let added = try http.json("POST", "/v1/items/genericPassword", ["service": "0", "account": "accessToken"], token: admin)
        #expect(added.status == 201)
        let header = try http.send("GET", "/v1/tokens/0/authorization", token: admin)
        #expect(header.status == 404)
        #expect(header.json["error"] as? String == "errSecItemNotFound")
        #expect(header.json["detail"] as? String == "the access token stored for service \"0\" is empty")
        let stored = try http.send("GET", "/v1/tokens/0", token: admin)
        #expect(stored.status == 200)
        #expect(stored.json["accessToken"] as? String == "")
        // The client library reports it rather than answering nil (a token is stored) or a bare header.
        let keychain = try keychain(admin)
        await #expect {
            _ = try await keychain.getAuthorizationHeader(service: "0")
        } throws: { ($0 as? KeychainError)?.code == .itemNotFound }
        #expect(try http.send("DELETE", "/v1/tokens/0", token: admin).json["deleted"] as? Int == 1)
    }

    @Test func userNamingUsesSuffixedServicesAndTheUserAsAccount() throws {
        let put = try http.json(
            "PUT", "/v1/tokens/Gus.awesome?user=gus%40naver.com", ["accessToken": "a", "refreshToken": "r"], token: admin)
        #expect(put.status == 200)
        let access = try http.send(
            "GET", "/v1/items/genericPassword?service=Gus.awesome.accessToken&account=gus%40naver.com&return=data", token: admin)
        #expect(access.status == 200)
        #expect((access.json["item"] as? [String: Any])?["value"] as? String == "a")
        let refresh = try http.send(
            "GET", "/v1/items/genericPassword?service=Gus.awesome.refreshToken&account=gus%40naver.com&return=data", token: admin)
        #expect((refresh.json["item"] as? [String: Any])?["value"] as? String == "r")
        // Without ?user= the other naming is meant: nothing stored there.
        #expect(try http.send("GET", "/v1/tokens/Gus.awesome", token: admin).status == 404)
        let header = try http.send("GET", "/v1/tokens/Gus.awesome/authorization?user=gus%40naver.com", token: admin)
        #expect(header.json["Authorization"] as? String == "Bearer a")
        #expect(try http.send("DELETE", "/v1/tokens/Gus.awesome?user=gus%40naver.com", token: admin).json["deleted"] as? Int == 2)
    }

    @Test func putReplacesBothTogetherKeepsOrRemovesTheRefreshToken() throws {
        _ = try http.json("PUT", "/v1/tokens/svc", ["accessToken": "a1", "refreshToken": "r1"], token: admin)
        let replaced = try http.json("PUT", "/v1/tokens/svc", ["accessToken": "a2", "refreshToken": "r2"], token: admin)
        #expect(replaced.json["replaced"] as? Int == 2)
        // Without refreshToken the stored one is kept.
        _ = try http.json("PUT", "/v1/tokens/svc", ["accessToken": "a3"], token: admin)
        var got = try http.send("GET", "/v1/tokens/svc", token: admin).json
        #expect(got["accessToken"] as? String == "a3")
        #expect(got["refreshToken"] as? String == "r2")
        // refreshToken: null removes it.
        _ = try http.json("PUT", "/v1/tokens/svc", ["accessToken": "a4", "refreshToken": NSNull()], token: admin)
        got = try http.send("GET", "/v1/tokens/svc", token: admin).json
        #expect(got["refreshToken"] is NSNull)
        // Never more than one item per token.
        let items = try http.send("GET", "/v1/items/genericPassword?service=svc&limit=all", token: admin)
        #expect((items.json["items"] as? [Any])?.count == 1)
    }

    @Test func badBodiesAreErrSecParamAndChangeNothing() throws {
        _ = try http.json("PUT", "/v1/tokens/strict", ["accessToken": "kept"], token: admin)
        let bodies: [[String: Any]] = [
            ["accessToken": "x", "scope": "read"],
            ["accessToken": "x", "expiresIn": 60, "expiresAt": "2030-01-01T00:00:00Z"],
            ["refreshToken": "only"],
            ["accessToken": ""],
            ["accessToken": "x", "expiresIn": "60"],
            ["accessToken": "x", "expiresAt": "tomorrow"],
        ]
        for body in bodies {
            let answer = try http.json("PUT", "/v1/tokens/strict", body, token: admin)
            #expect(answer.status == 400, "\(body.keys.sorted())")
            #expect(answer.json["status"] as? Int == -50)
            #expect(!(answer.text.contains("\"x\"")), "no token echoed")
        }
        #expect(try http.send("PUT", "/v1/tokens/strict?scope=x", body: Data(#"{"accessToken":"x"}"#.utf8), token: admin).status == 400)
        #expect(try http.send("GET", "/v1/tokens/strict", token: admin).json["accessToken"] as? String == "kept")
        #expect(try http.send("GET", "/v1/tokens/strict").status == 401)
    }

    /// Expiry without waiting for it: `expiresIn` is counted from the server's clock, and an
    /// `expiresAt` already past (the body takes any RFC 3339 date) is an expired token at once.
    /// Crossing the expiry as time passes is TokenServiceTests' part, with a clock it moves.
    @Test func expiryIsKeptAndAnExpiredTokenGivesNoHeader() throws {
        let before = Date()
        let put = try http.json("PUT", "/v1/tokens/short", ["accessToken": "not-yet", "expiresIn": 3600], token: admin)
        let after = Date()
        let expiresAt = try #require(put.json["expiresAt"] as? String)
        let expiry = try #require(Self.date(expiresAt))
        #expect(expiry >= before.addingTimeInterval(3600 - 0.001) && expiry <= after.addingTimeInterval(3600 + 0.001), "\(expiresAt)")
        var got = try http.send("GET", "/v1/tokens/short", token: admin).json
        #expect(got["expiresAt"] as? String == expiresAt)
        #expect(got["expired"] as? Bool == false)
        #expect(try http.send("GET", "/v1/tokens/short/authorization", token: admin).json["Authorization"] as? String == "Bearer not-yet")
        // Kept in the access token item's `generic` attribute, visible there.
        let item = try http.send("GET", "/v1/items/genericPassword?service=short&account=accessToken", token: admin)
        let generic = try #require((item.json["item"] as? [String: Any])?["generic"] as? String)
        #expect(String(decoding: Data(base64Encoded: generic)!, as: UTF8.self) == #"{"expiresAt":"\#(expiresAt)","version":1}"#)

        let past = try http.json("PUT", "/v1/tokens/short", ["accessToken": "gone", "expiresAt": "2001-02-03T04:05:06.789Z"], token: admin)
        #expect(past.json["expiresAt"] as? String == "2001-02-03T04:05:06.789Z")
        got = try http.send("GET", "/v1/tokens/short", token: admin).json
        #expect(got["accessToken"] as? String == "gone")
        #expect(got["expired"] as? Bool == true)
        let header = try http.send("GET", "/v1/tokens/short/authorization", token: admin)
        #expect(header.status == 404)
        #expect(header.json["error"] as? String == "errSecItemNotFound")
        #expect((header.json["detail"] as? String)?.contains("expired") == true)

        let fixed = try http.json("PUT", "/v1/tokens/later", ["accessToken": "a", "expiresAt": "2999-01-01T00:00:00Z"], token: admin)
        #expect(fixed.json["expiresAt"] as? String == "2999-01-01T00:00:00.000Z")
    }

    /// An answer's date (RFC 3339 UTC with milliseconds).
    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    @Test func tokensFollowTheCallersAccessGroups() throws {
        let alpha = try newClient("alpha", groups: ["team.alpha"])
        let beta = try newClient("beta", groups: ["team.beta"])
        _ = try http.json("PUT", "/v1/tokens/shared-name", ["accessToken": "alpha-token"], token: alpha)
        #expect(try http.send("GET", "/v1/tokens/shared-name", token: beta).status == 404)
        _ = try http.json("PUT", "/v1/tokens/shared-name", ["accessToken": "beta-token"], token: beta)
        #expect(try http.send("GET", "/v1/tokens/shared-name", token: alpha).json["accessToken"] as? String == "alpha-token")
        #expect(try http.send("GET", "/v1/tokens/shared-name", token: beta).json["accessToken"] as? String == "beta-token")
        let item = try http.send("GET", "/v1/items/genericPassword?service=shared-name&account=accessToken", token: alpha)
        #expect((item.json["item"] as? [String: Any])?["accessGroup"] as? String == "team.alpha")
        let foreign = try http.send("GET", "/v1/tokens/shared-name?accessGroup=team.beta", token: alpha)
        #expect(foreign.status == 403)
        #expect(foreign.json["error"] as? String == "errSecMissingEntitlement")
    }

    // MARK: - The async client

    @Test func clientSavesReadsAndDeletesTokens() async throws {
        let keychain = try keychain(admin)
        #expect(try await keychain.getAuthorizationHeader(service: "client.svc") == nil)
        #expect(try await keychain.tokens(service: "client.svc") == nil)
        try await keychain.saveTokens(service: "client.svc", accessToken: "A", refreshToken: "R")
        #expect(try await keychain.getAuthorizationHeader(service: "client.svc") == ["Authorization": "Bearer A"])
        let tokens = try #require(try await keychain.tokens(service: "client.svc"))
        #expect(tokens.accessToken == "A" && tokens.refreshToken == "R" && tokens.expiresAt == nil && !tokens.expired)
        try await keychain.saveTokens(service: "client.svc", user: "me", accessToken: "UA", refreshToken: nil, expiresIn: 3600)
        let mine = try #require(try await keychain.tokens(service: "client.svc", user: "me"))
        #expect(mine.accessToken == "UA" && mine.refreshToken == nil && mine.expiresAt != nil)
        #expect(try await keychain.deleteTokens(service: "client.svc") == 2)
        #expect(try await keychain.deleteTokens(service: "client.svc") == 0)
        #expect(try await keychain.getAuthorizationHeader(service: "client.svc", user: "me") == ["Authorization": "Bearer UA"])

        // An expiry already past: stored, reported expired, and no header.
        try await keychain.saveTokens(service: "client.expiring", accessToken: "E", expiresAt: Date(timeIntervalSinceNow: -60))
        #expect(try await keychain.tokens(service: "client.expiring")?.expired == true)
        await #expect {
            _ = try await keychain.getAuthorizationHeader(service: "client.expiring")
        } throws: { ($0 as? KeychainError)?.code == .itemNotFound }
    }

    @Test func serverErrorsArriveAsTheSameKeychainError() async throws {
        // What the server answers over raw HTTP...
        let raw = try http.json("PUT", "/v1/tokens/e", ["accessToken": "x", "unknown": 1], token: admin)
        let json = try JSONValue.parse(Array(raw.body))
        let serverError = try #require(ErrorBody(decoding: json)?.error)
        // ...is exactly what the client throws.
        let keychain = try keychain(admin)
        do {
            _ = try await keychain.send("PUT", "/tokens/e", body: JSONValue.object([("accessToken", .string("x")), ("unknown", .integer(1))]).serialized())
            Issue.record("expected an error")
        } catch let error as KeychainError {
            #expect(error == serverError)
            #expect(error.status == -50 && error.name == "errSecParam" && error.detail != nil)
        }
        let badToken = try self.keychain("kc_not-a-token")
        await #expect(throws: KeychainError(.authFailed, try authFailedDetail())) {
            _ = try await badToken.tokens(service: "x")
        }
        let missing = try self.keychain(admin)
        do {
            _ = try await missing.send("GET", "/tokens/none", query: [])
            Issue.record("expected an error")
        } catch let error as KeychainError {
            #expect(error.code == .itemNotFound)
            #expect(error.message == "The specified item could not be found in the keychain.")
        }
        // Nobody listening: errSecNotAvailable.
        let nowhere = try KeychainClient(baseURL: URL(string: "http://127.0.0.1:9")!, token: admin, timeout: 5)
        await #expect(throws: KeychainError.self) { _ = try await nowhere.tokens(service: "x") }
    }

    private func authFailedDetail() throws -> String? {
        let raw = try http.send("GET", "/v1/tokens/x", token: "kc_not-a-token")
        return ErrorBody(decoding: try JSONValue.parse(Array(raw.body)))?.error.detail
    }
}
