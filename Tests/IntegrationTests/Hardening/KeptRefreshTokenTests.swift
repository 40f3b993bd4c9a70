import Foundation
import KeychainTestSupport
import Testing

/// Review finding 3 (docs/security.md, "Review findings"): a refresh token keychaind keeps for a
/// refresh setting is not there for a client-role token on any item route (read, update, delete,
/// by query or by persistent reference), and cannot be moved out of its place nor have another
/// item moved into it; the token routes still replace it (write-only).
@Suite(.serialized)
final class KeptRefreshTokenTests {
    static let service = "kept.example.com"
    static let refreshToken = "rt-kept-7f3a9c"
    static let userRefreshToken = "rt-kept-user-51e0"

    enum Backend: CaseIterable { case sqlite, postgresql }

    private(set) var server: (any LoopbackKeychaind)!
    /// The SQLite case's server: the app in process (the PostgreSQL case runs a node of `cluster`).
    private var inProcess: InProcessKeychaind?
    private var cluster: PGCluster?
    private(set) var admin = ""
    private(set) var client = ""

    /// A server on `backend` where a client stored its tokens (both namings) and an admin has
    /// keychaind keep them fresh (the endpoint is never called: the tokens are not due).
    func start(_ backend: Backend) throws {
        switch backend {
        case .sqlite:
            let app = try InProcessKeychaind()
            inProcess = app
            server = app
        case .postgresql:
            let cluster = try PGCluster(postgres: try ThrowawayPostgres.shared(), nodes: 1)
            self.cluster = cluster
            server = cluster.node(0)
        }
        admin = try server.adminToken()
        let created = try http.json(
            "POST", "/v1/admin/clients", ["name": "backend", "accessGroups": ["admin", "other"]], token: admin)
        client = try #require(created.json["token"] as? String)
        for (query, refreshToken) in [("", Self.refreshToken), ("?user=alice", Self.userRefreshToken)] {
            let put = try http.json(
                "PUT", "/v1/tokens/\(Self.service)\(query)",
                ["accessToken": "at-\(refreshToken)", "refreshToken": refreshToken, "expiresIn": 3600], token: client)
            #expect(put.status == 200, "\(put.text)")
            let setting = try http.json(
                "PUT", "/v1/tokens/\(Self.service)/refresh\(query)",
                [
                    "tokenEndpoint": "http://127.0.0.1:1/token", "grant": "refresh_token", "clientId": "x",
                    "clientSecret": "y",
                ], token: admin)
            #expect(setting.status == 200, "\(setting.text)")
        }
    }

    deinit {
        if let cluster { cluster.stopAll() } else { inProcess?.stop() }
    }

    var http: HTTPTestClient { server.client() }

    static let byName = "/v1/items/genericPassword?service=\(service)&account=refreshToken"
    static let byUserName = "/v1/items/genericPassword?service=\(service).refreshToken&account=alice"

    /// The kept refresh token's persistent reference, as an admin sees it.
    func reference(_ path: String) throws -> String {
        let found = try http.send("GET", path + "&return=ref", token: admin)
        return try #require(found.json["item"].flatMap { ($0 as? [String: Any])?["persistentRef"] as? String })
    }

    /// An answer that is errSecItemNotFound and carries neither refresh token.
    func expectNotFound(_ answer: HTTPTestClient.Response, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer.status == 404, "\(answer.text)", sourceLocation: sourceLocation)
        #expect(answer.json["error"] as? String == "errSecItemNotFound", sourceLocation: sourceLocation)
        #expect(
            !answer.text.contains(Self.refreshToken) && !answer.text.contains(Self.userRefreshToken),
            sourceLocation: sourceLocation)
    }

    /// Whether the admin still reads `value` where the kept token was stored.
    func adminReads(_ path: String, _ value: String) throws -> Bool {
        try http.send("GET", path + "&return=data", token: admin).json["item"].flatMap {
            ($0 as? [String: Any])?["value"] as? String
        } == value
    }

    @Test(arguments: Backend.allCases) func aClientCannotMoveAKeptRefreshTokenOutAndReadIt(_ backend: Backend) throws {
        try start(backend)
        for (path, secret) in [(Self.byName, Self.refreshToken), (Self.byUserName, Self.userRefreshToken)] {
            let ref = try reference(path)
            let byRef = "/v1/items/genericPassword/\(ref)"
            // The review's attack: rename it (or move it to the client's other group), then read it.
            expectNotFound(try http.json("PATCH", path, ["account": "stolen"], token: client))
            expectNotFound(try http.json("PATCH", path, ["accessGroup": "other"], token: client))
            expectNotFound(try http.json("PATCH", byRef, ["account": "stolen"], token: client))
            expectNotFound(try http.json("PATCH", byRef, ["value": "planted"], token: client))
            let stolen = try http.send(
                "GET", "/v1/items/genericPassword?account=stolen&limit=all&return=data", token: client)
            expectNotFound(stolen)
            // Nor read, nor delete it, by name or by reference.
            expectNotFound(try http.send("GET", path + "&return=data", token: client))
            expectNotFound(try http.send("GET", byRef + "?return=data", token: client))
            expectNotFound(try http.send("DELETE", path, token: client))
            expectNotFound(try http.send("DELETE", byRef, token: client))
            #expect(try adminReads(path, secret))
        }
        // An update or delete of several items passes over it and counts only what the client sees.
        let relabelled = try http.json(
            "PATCH", "/v1/items/genericPassword?service=\(Self.service)", ["label": "mine"], token: client)
        #expect(relabelled.status == 200 && relabelled.json["updated"] as? Int == 1, "\(relabelled.text)")
        let admins = try http.send("GET", Self.byName + "&return=attributes", token: admin)
        #expect((admins.json["item"] as? [String: Any])?["label"] == nil, "\(admins.text)")
        let everything = try http.send("DELETE", "/v1/items/genericPassword?account=refreshToken", token: client)
        expectNotFound(everything)
        #expect(try adminReads(Self.byName, Self.refreshToken))
    }

    @Test(arguments: Backend.allCases) func aClientCannotPutAnotherItemInAKeptRefreshTokensPlace(_ backend: Backend) throws {
        try start(backend)
        let decoy = try http.json(
            "POST", "/v1/items/genericPassword", ["service": Self.service, "account": "decoy", "value": "d"], token: client)
        #expect(decoy.status == 201, "\(decoy.text)")
        let moved = try http.json(
            "PATCH", "/v1/items/genericPassword?service=\(Self.service)&account=decoy", ["account": "refreshToken"],
            token: client)
        #expect(moved.status == 403 && moved.json["error"] as? String == "errSecMissingEntitlement", "\(moved.text)")
        let added = try http.json(
            "POST", "/v1/items/genericPassword", ["service": Self.service, "account": "refreshToken", "value": "p"],
            token: client)
        #expect(added.status == 403, "\(added.text)")
        #expect(try adminReads(Self.byName, Self.refreshToken))
        // An admin may.
        let byAdmin = try http.json(
            "PATCH", "/v1/items/genericPassword?service=\(Self.service)&account=decoy", ["account": "refreshToken"],
            token: admin)
        #expect(byAdmin.status == 409, "\(byAdmin.text)")
    }

    @Test(arguments: Backend.allCases) func theTokenRoutesStillReplaceAndRemoveItForTheClient(_ backend: Backend) throws {
        try start(backend)
        let tokens = try http.send("GET", "/v1/tokens/\(Self.service)", token: client)
        #expect(tokens.status == 200 && tokens.json["refreshToken"] is NSNull, "\(tokens.text)")
        let put = try http.json(
            "PUT", "/v1/tokens/\(Self.service)", ["accessToken": "at-2", "refreshToken": "rt-2", "expiresIn": 3600],
            token: client)
        #expect(put.status == 200 && put.json["replaced"] as? Int == 2, "\(put.text)")
        #expect(try adminReads(Self.byName, "rt-2"))
        // DELETE /v1/tokens/{service} removes the pair, the kept refresh token with it.
        let deleted = try http.send("DELETE", "/v1/tokens/\(Self.service)", token: client)
        #expect(deleted.status == 200 && deleted.json["deleted"] as? Int == 2, "\(deleted.text)")
        #expect(try http.send("GET", Self.byName, token: admin).status == 404)
    }
}
