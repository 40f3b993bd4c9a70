import Foundation
import KeychaindTesting
import Testing

/// Access tokens with control characters (issue 40): a token holding CR/LF was stored and answered
/// inside `Bearer …`, splitting the header of a client that copies it into a request. PUT refuses
/// such tokens; `/authorization` never answers one written through the item routes.
@Suite(.serialized)
struct BearerTokenTests {
    @Test func controlCharactersInTokensAreRefusedAndNeverAnsweredAsAHeader() throws {
        let server = try TestApp()
        defer { server.stop() }
        let http = server.http
        let admin = server.adminToken
        for (accessToken, refreshToken) in [("at\r\nX-Injected: 1", "rt"), ("at\u{7F}", "rt"), ("at\u{85}", "rt"), ("at", "rt\n")] {
            let put = try http.json("PUT", "/v1/tokens/crlf.example.com", ["accessToken": accessToken, "refreshToken": refreshToken], token: admin)
            #expect(put.status == 400 && put.json["error"] as? String == "errSecParam", "\(put.text)")
        }
        #expect(try http.send("GET", "/v1/tokens/crlf.example.com", token: admin).status == 404)

        let added = try http.json(
            "POST", "/v1/items/genericPassword",
            ["service": "crlf.example.com", "account": "accessToken", "value": "at\r\nX-Injected: 1"], token: admin)
        #expect(added.status == 201, "\(added.text)")
        let header = try http.send("GET", "/v1/tokens/crlf.example.com/authorization", token: admin)
        #expect(header.status == 404 && header.json["error"] as? String == "errSecItemNotFound", "\(header.text)")
        #expect((header.json["detail"] as? String ?? "").contains("control character"), "\(header.text)")
        #expect(!header.text.contains("X-Injected"))
    }
}
