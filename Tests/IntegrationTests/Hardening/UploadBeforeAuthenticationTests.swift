import Foundation
import Testing

/// Issue 29, item 4: a request is authenticated on its head, before a byte of its body is kept.
/// A refused upload is answered at once and its connection closed, so declaring (and sending)
/// large bodies without a valid token costs the server no memory.
@Suite(.serialized)
struct UploadBeforeAuthenticationTests {
    static let declared = 1_000_000

    /// Sixty uploads at once, each declaring a 1 MB body: each is answered 401 on its head alone
    /// (before the client sent any of the body), with `Connection: close`, the connection is
    /// closed, and the body then sent goes nowhere: the server's RSS does not grow.
    @Test func refusedUploadsAreAnsweredOnTheirHeadAndCostNoMemory() throws {
        let server = try KeychaindProcess()
        defer { server.stop() }
        let admin = try server.adminToken()
        // Warm: the allocator's arenas of the worker threads exist before the first measurement.
        #expect(try server.client().json("POST", "/v1/items/genericPassword", ["service": "warm"], token: admin).status == 201)
        let before = Hardening.rssKiB(server.pid)
        let body = Data(repeating: 0x61, count: Self.declared)
        var connections: [TestConnection] = []
        for index in 0..<60 {
            let connection = try TestConnection(port: server.port, timeoutSeconds: 5)
            let token = index % 2 == 0 ? ["Authorization": "Bearer kc_forged-token"] : [:]
            try connection.write(HTTPTestClient.head(
                "POST", "/v1/items/genericPassword", headers: token.merging(["Content-Type": "application/json"]) { $1 },
                bodyLength: Self.declared))
            connections.append(connection)
        }
        for connection in connections {
            let answer = try connection.readResponse()
            #expect(answer.status == 401)
            #expect(answer.headers["connection"] == "close")
            #expect(answer.json["status"] as? Int == -25293)
            // The body, sent anyway, is not read: the server has closed the connection.
            try? connection.write(body)
        }
        #expect(connections.allSatisfy { $0.isClosedByPeer() })
        let growth = Hardening.rssKiB(server.pid) - before
        Hardening.report("60 refused 1 MB uploads: RSS \(before) KiB -> +\(growth) KiB")
        #expect(growth < 8 * 1024, "RSS grew by \(growth) KiB")

        // A valid token's upload is read and served as before; an unknown route is refused on
        // its head too (404), as the chain answers it.
        let created = try server.client().json("POST", "/v1/items/genericPassword", ["service": "kept"], token: admin)
        #expect(created.status == 201)
        let unknown = try server.client().send("POST", "/v1/no/such/route", body: Data("{}".utf8), token: admin)
        #expect(unknown.status == 404 && unknown.headers["connection"] == "close")
        #expect(server.stop() == 0)
    }
}
