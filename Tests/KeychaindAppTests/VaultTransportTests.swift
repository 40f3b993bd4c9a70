import Foundation
import KeychainAPI
import KeychainCore
import KeychaindTesting
import KeychainHTTP
import KeychainTestSupport
import Logging
import MicroHTTPDServer
import Testing

/// The transport and Vault's tools: libmicrohttpd hands `LIST` to the router (its body read as
/// GET's), and its own refusals take the route's error shape.
struct VaultTransportTests {
    /// `LIST /v1/list/{path*}` (open, Vault's surface) answers its path, on a loopback port.
    static func serve(maxBodyBytes: Int = 1024, _ body: (UInt16) throws -> Void) throws {
        var router = Router()
        router.add(.list, "/list/{path*}", access: .open, audit: .none, surface: .vault) { context in
            .json(VaultEnvelope { $0.member("path", context.parameters["path"] ?? "") })
        }
        let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let application = KeychainApplication(
            router: router, authenticator: Authenticator(clients: InMemoryClientStore(), tokens: TestTokenIssuer()),
            logger: logger)
        let server = MicroHTTPDServer(
            responder: application,
            settings: ServerSettings(
                host: "127.0.0.1", port: 0, threads: 2, maxBodyBytes: maxBodyBytes, maxConnections: 16,
                maxConnectionsPerAddress: 16, connectionMemoryBytes: 64 * 1024, idleTimeoutSeconds: 5,
                headerTimeoutSeconds: 5, shutdownGraceSeconds: 1),
            logger: logger)
        try server.start()
        defer { server.stop() }
        try body(server.port)
    }

    @Test func listReachesItsRoute() throws {
        try Self.serve { port in
            let listed = try LoopbackHTTP.send("LIST", "/v1/list/team/db/", headers: [], body: nil, port: port)
            #expect(listed.status == 200 && listed.json["data"]?["path"] == .string("team/db/"))
            let withBody = try LoopbackHTTP.send("LIST", "/v1/list/a", headers: [], body: Array("{}".utf8), port: port)
            #expect(withBody.status == 200 && withBody.json["data"]?["path"] == .string("a"))
            let other = try LoopbackHTTP.send("GET", "/v1/list/a", headers: [], body: nil, port: port)
            #expect(other.status == 405 && other.header("allow") == "LIST")
        }
    }

    @Test func aBodyOverTheLimitIsRefusedInVaultsShape() throws {
        try Self.serve(maxBodyBytes: 16) { port in
            let refused = try LoopbackHTTP.send(
                "LIST", "/v1/list/a", headers: [], body: Array(String(repeating: "x", count: 64).utf8), port: port)
            #expect(refused.status == 413)
            #expect(refused.json == .object([("errors", .array([.string("request body exceeds the limit of 16 bytes")]))]))
        }
    }
}
