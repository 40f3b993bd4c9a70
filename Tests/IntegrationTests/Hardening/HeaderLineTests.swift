import Foundation
import Testing

/// Issue 40, finding 11: header lines that RFC 9112 refuses and libmicrohttpd 0.9.75 parses its
/// own way. `Transfer-Encoding : chunked` (whitespace before the colon, §5.1) was kept as another
/// header and a folded `Transfer-Encoding` (obs-fold, §5.2) glued into another name, so the body was
/// framed by `Content-Length` where a proxy in front might have read chunks: 400, connection closed,
/// as the other smuggling shapes are.
@Suite(.serialized)
final class HeaderLineTests {
    let server: InProcessKeychaind
    let token: String

    init() throws {
        server = try InProcessKeychaind()
        token = try server.newClientToken("lines", groups: ["lines"])
    }

    deinit { server.stop() }

    static let item = Data(#"{"service":"lines","account":"a","value":"v"}"#.utf8)
    static let smuggled = Data("GET /v1/admin/clients HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)

    /// A POST of `item`, framed by `Content-Length`, with `lines` among its headers and a second
    /// request after the body.
    func post(_ lines: String) -> Data {
        Data(
            ("POST /v1/items/genericPassword HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                + "Content-Type: application/json\r\n\(lines)Content-Length: \(Self.item.count)\r\n\r\n").utf8)
            + Self.item + Self.smuggled
    }

    @Test(arguments: [
        ("space before the colon", "Transfer-Encoding : chunked\r\n"),
        ("tab before the colon", "Transfer-Encoding\t: chunked\r\n"),
        ("folded Transfer-Encoding", "Transfer-Encoding:\r\n chunked\r\n"),
        ("folded with a tab", "X-Note: a\r\n\tTransfer-Encoding: chunked\r\n"),
        ("first header line folded", " Transfer-Encoding: chunked\r\n"),
    ])
    func malformedHeaderLinesAreRefusedBeforeTheBody(label: String, lines: String) throws {
        let connection = try TestConnection(port: server.port)
        try connection.write(post(lines))
        let answer = try connection.readResponse()
        #expect(answer.status == 400, "\(label): \(answer.status) \(answer.text)")
        #expect(answer.json["status"] as? Int == -50, "\(label): \(answer.text)")
        #expect(answer.headers["connection"] == "close", "\(label)")
        #expect(throws: (any Error).self, "\(label): nothing is read after the refusal") { _ = try connection.readResponse() }
        let listed = try server.client().send("GET", "/v1/items/genericPassword?service=lines", token: token)
        #expect(listed.status == 404, "\(label): no item was added: \(listed.text)")
    }

    /// The same request with well-formed lines is served (the checks refuse only the shapes above).
    @Test func wellFormedHeaderLinesAreServed() throws {
        let connection = try TestConnection(port: server.port)
        try connection.write(post("X-Note: a b\tc\r\nX-Empty:\r\n"))
        #expect(try connection.readResponse().status == 201)
        #expect(try server.client().send("DELETE", "/v1/items/genericPassword?service=lines", token: token).status == 200)
    }
}
