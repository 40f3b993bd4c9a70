import Foundation
@testable import KeychainClient
import Testing

/// Issue 40, finding 10: the path is routed on its segments as sent, and each parameter is
/// percent-decoded after the match. `%2F` stays inside its segment (it used to reach another
/// route), a NUL or a bad escape is errSecParam (a NUL used to cut the name short), and the
/// client library's names round-trip whatever they hold.
@Suite(.serialized)
final class PathEncodingTests {
    let server: InProcessKeychaind
    let admin: String

    init() throws {
        server = try InProcessKeychaind()
        admin = try server.adminToken()
    }

    deinit { server.stop() }

    @Test func anEncodedSlashStaysInItsSegment() throws {
        let http = server.client()
        let put = try http.json("PUT", "/v1/tokens/svc%2Fauthorization", ["accessToken": "slash-token"], token: admin)
        #expect(put.status == 200, "\(put.text)")
        // The token route of the service `svc/authorization`, not the authorization route of `svc`.
        let get = try http.send("GET", "/v1/tokens/svc%2Fauthorization", token: admin)
        #expect(get.status == 200, "\(get.text)")
        #expect(get.json["accessToken"] as? String == "slash-token", "\(get.text)")
        #expect(try http.send("GET", "/v1/tokens/svc/authorization", token: admin).status == 404)
        let item = try http.send("GET", "/v1/items/genericPassword?service=svc%2Fauthorization&return=attributes", token: admin)
        #expect((item.json["item"] as? [String: Any])?["service"] as? String == "svc/authorization", "\(item.text)")
        // Literal segments match only as spelled: an encoded `items` is no route.
        #expect(try http.send("GET", "/v1/%69tems/genericPassword", token: admin).status == 404)
    }

    @Test(arguments: ["a%00b", "%00", "a%zzb", "a%4", "%", "a%FFb"])
    func aNulOrABadEscapeInANameIsErrSecParam(segment: String) throws {
        let http = server.client()
        for (method, body) in [("GET", nil), ("PUT", Data(#"{"accessToken":"nul-token"}"#.utf8)), ("DELETE", nil)] {
            let answer = try http.send(method, "/v1/tokens/\(segment)", body: body, token: admin)
            #expect(answer.status == 400, "\(method) \(segment): \(answer.status) \(answer.text)")
            #expect(answer.json["status"] as? Int == -50 && answer.json["error"] as? String == "errSecParam", "\(answer.text)")
        }
        // Nothing was stored under the name a NUL would have cut it to.
        #expect(try http.send("GET", "/v1/tokens/a", token: admin).status == 404)
        // The caller is checked first: without a token it is 401, whatever the path holds.
        #expect(try http.send("GET", "/v1/tokens/\(segment)").status == 401)
    }

    @Test func everyServiceNameRoundTripsThroughTheClient() async throws {
        let keychain = try KeychainClient(
            baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, token: admin, timeout: 10)
        let names = [
            "a/b", "svc/authorization", "100%", "100%25", "what?", "what?x=1", "x#y", "with space", "a+b",
            "café/東京", "..", "%2F", "refresh",
        ]
        for (index, name) in names.enumerated() {
            try await keychain.saveTokens(service: name, accessToken: "token-\(index)", refreshToken: nil)
        }
        for (index, name) in names.enumerated() {
            let stored = try await keychain.tokens(service: name)
            #expect(stored?.accessToken == "token-\(index)", "\(name)")
            #expect(try await keychain.getAuthorizationHeader(service: name) == ["Authorization": "Bearer token-\(index)"], "\(name)")
        }
        // Stored under exactly these names.
        let listed = try server.client().send("GET", "/v1/items/genericPassword?limit=all&return=attributes", token: admin)
        let services = Set(((listed.json["items"] as? [[String: Any]]) ?? []).compactMap { $0["service"] as? String })
        #expect(services == Set(names), "\(services)")
        for name in names {
            #expect(try await keychain.deleteTokens(service: name) == 1, "\(name)")
        }
    }
}
