import Foundation
import KeychainTestSupport
import Testing

/// Review finding 9 (docs/security.md, "Review findings"): a page cursor carried the global row
/// sequence in clear (`v1:<seq>:`), so a tenant counted other tenants' writes between two of its
/// pages. Cursors are now sealed: opaque, and opened only for the query and client they were
/// given to; paging stays correct on both backends.
@Suite(.serialized)
final class PageCursorTests {
    enum Backend: CaseIterable { case sqlite, postgresql }

    private var server: (any LoopbackKeychaind)!
    /// The SQLite case's server: the app in process (the PostgreSQL case runs a node of `cluster`).
    private var inProcess: InProcessKeychaind?
    private var cluster: PGCluster?
    private var tenant = ""
    private var neighbour = ""

    /// The smallest answer bound: 8,064 counted bytes a page, two of these items.
    static let environment = ["KEYCHAIND_LIMITS_MAX_ANSWER_BYTES": "65536"]
    static let value = String(repeating: "v", count: 3000)

    func start(_ backend: Backend) throws {
        switch backend {
        case .sqlite:
            let app = try InProcessKeychaind(environment: Self.environment)
            inProcess = app
            server = app
        case .postgresql:
            let cluster = try PGCluster(postgres: try ThrowawayPostgres.shared(), nodes: 1, environment: Self.environment)
            self.cluster = cluster
            server = cluster.node(0)
        }
        let admin = try server.adminToken()
        func client(_ name: String, _ groups: [String]) throws -> String {
            let created = try http.json("POST", "/v1/admin/clients", ["name": name, "accessGroups": groups], token: admin)
            return try #require(created.json["token"] as? String, "\(created.text)")
        }
        tenant = try client("tenant", ["tenant", "shared"])
        neighbour = try client("neighbour", ["neighbour", "shared"])
    }

    deinit {
        if let cluster { cluster.stopAll() } else { inProcess?.stop() }
    }

    var http: HTTPTestClient { server.client() }

    func add(_ account: String, token: String, group: String) throws {
        let added = try http.json(
            "POST", "/v1/items/genericPassword",
            ["service": "paged", "account": account, "value": Self.value, "accessGroup": group], token: token)
        #expect(added.status == 201, "\(added.text)")
    }

    func page(_ query: String, cursor: String?, token: String) throws -> HTTPTestClient.Response {
        let path = "/v1/items/genericPassword?\(query)" + (cursor.map { "&cursor=\($0)" } ?? "")
        return try http.send("GET", path, token: token)
    }

    static let query = "service=paged&limit=all&return=attributes,data"

    @Test(arguments: Backend.allCases) func cursorsRevealNothingAndOpenOnlyForTheirQueryAndClient(_ backend: Backend) throws {
        try start(backend)
        for index in 0..<5 { try add("t\(index)", token: tenant, group: "shared") }
        let first = try page(Self.query, cursor: nil, token: tenant)
        let cursor = try #require(first.json["next"] as? String, "\(first.text)")
        // The neighbour writes; the tenant's next cursor at the same place is no different for it.
        for index in 0..<7 { try add("n\(index)", token: neighbour, group: "neighbour") }
        let again = try #require(try page(Self.query, cursor: nil, token: tenant).json["next"] as? String)
        #expect(again == cursor, "a cursor must not move with other tenants' writes")
        // Nothing in it reads as a number (it was base64url of `v1:<seq>:`).
        let decoded = Data(base64Encoded: cursor.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            + String(repeating: "=", count: (4 - cursor.count % 4) % 4))
        #expect(decoded.map { !String(decoding: $0, as: UTF8.self).hasPrefix("v1:") } ?? true, "\(cursor)")
        #expect(cursor.count == 43, "\(cursor)")

        // Another client (sharing the group), another query, an altered cursor: errSecParam.
        func refused(_ answer: HTTPTestClient.Response, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(answer.status == 400 && answer.json["error"] as? String == "errSecParam", "\(answer.text)",
                sourceLocation: sourceLocation)
        }
        refused(try page(Self.query, cursor: cursor, token: neighbour))
        refused(try page("service=paged&limit=all&return=data", cursor: cursor, token: tenant))
        refused(try page("service=paged&limit=3&return=attributes,data", cursor: cursor, token: tenant))
        refused(try page("service=other&limit=all&return=attributes,data", cursor: cursor, token: tenant))
        let flipped = String(cursor.dropLast()) + (cursor.hasSuffix("A") ? "B" : "A")
        refused(try page(Self.query, cursor: flipped, token: tenant))
        refused(try page(Self.query, cursor: "djE6MTo", token: tenant))  // the old form, `v1:1:`

        // Paging with its own cursors gives every item once, in order.
        var accounts: [String] = []
        var next: String? = nil
        repeat {
            let answer = try page(Self.query, cursor: next, token: tenant)
            #expect(answer.status == 200, "\(answer.text)")
            accounts += (answer.json["items"] as? [[String: Any]] ?? []).compactMap { $0["account"] as? String }
            next = answer.json["next"] as? String
        } while next != nil
        #expect(accounts == (0..<5).map { "t\($0)" })
        // A numeric limit carried across pages.
        var limited: [String] = []
        next = nil
        repeat {
            let answer = try page("service=paged&limit=3&return=attributes,data", cursor: next, token: tenant)
            limited += (answer.json["items"] as? [[String: Any]] ?? []).compactMap { $0["account"] as? String }
            next = answer.json["next"] as? String
        } while next != nil
        #expect(limited == ["t0", "t1", "t2"])
    }
}
