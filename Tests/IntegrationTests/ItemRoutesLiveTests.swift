import Foundation
import Testing

/// Issue 4's HTTP behaviour against the real app over real HTTP (libmicrohttpd on loopback, the
/// app in process: `InProcessKeychaind`): the seeds' SecureStore flows,
/// the token-naming pitfall, isolation between clients, and bad inputs that change nothing.
@Suite(.serialized)
final class ItemRoutesLiveTests {
    let server: InProcessKeychaind
    let http: HTTPTestClient
    let admin: String

    init() throws {
        server = try InProcessKeychaind()
        http = server.client()
        admin = server.adminToken()
    }

    deinit { server.stop() }

    private func newClient(_ name: String, groups: [String]) throws -> String {
        let answer = try http.json("POST", "/v1/admin/clients", ["name": name, "accessGroups": groups], token: admin)
        #expect(answer.status == 201, "\(answer.text)")
        return try #require(answer.json["token"] as? String)
    }

    private static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    /// The seed tutorial's SecureStore over HTTP: upsert by copy-matching then update or add.
    struct SecureStore {
        let http: HTTPTestClient
        let token: String
        let itemClass: String
        let base: [String: Any]

        var queryString: String {
            base.sorted { $0.key < $1.key }.map { "\($0.key)=\(ItemRoutesLiveTests.encode("\($0.value)"))" }
                .joined(separator: "&")
        }

        func setValue(_ value: String, for account: String) throws {
            let path = "/v1/items/\(itemClass)?\(queryString)&account=\(account)"
            let lookup = try http.send("GET", path + "&return=none", token: token)
            switch lookup.status {
            case 200:
                let updated = try http.json("PATCH", path, ["value": value], token: token)
                #expect(updated.json["updated"] as? Int == 1)
            case 404:
                var body = base
                body["account"] = account
                body["value"] = value
                #expect(try http.json("POST", "/v1/items/\(itemClass)", body, token: token).status == 201)
            default:
                Issue.record("lookup answered \(lookup.status): \(lookup.text)")
            }
        }

        func getValue(for account: String) throws -> String? {
            let answer = try http.send(
                "GET", "/v1/items/\(itemClass)?\(queryString)&account=\(account)&return=attributes,data", token: token)
            if answer.status == 404 { return nil }
            #expect(answer.status == 200)
            return (answer.json["item"] as? [String: Any])?["value"] as? String
        }

        func removeValue(for account: String) throws {
            let status = try http.send("DELETE", "/v1/items/\(itemClass)?\(queryString)&account=\(account)", token: token).status
            #expect(status == 200 || status == 404)
        }

        func removeAllValues() throws {
            let status = try http.send("DELETE", "/v1/items/\(itemClass)?\(queryString)", token: token).status
            #expect(status == 200 || status == 404)
        }
    }

    /// The seed's two queryables: a generic password by service, an internet password by its
    /// server, port, path, security domain, protocol and authentication type.
    static func baseQuery(_ itemClass: String) -> [String: Any] {
        itemClass == "genericPassword"
            ? ["service": "someService"]
            : [
                "server": "someServer", "port": 8080, "path": "somePath", "securityDomain": "someDomain",
                "protocol": "https", "authenticationType": "httpBasic",
            ]
    }

    @Test(arguments: ["genericPassword", "internetPassword"])
    func secureStoreFlows(itemClass: String) throws {
        let store = SecureStore(
            http: http, token: try newClient("store-\(itemClass)", groups: ["app"]), itemClass: itemClass,
            base: Self.baseQuery(itemClass))
        try store.setValue("pwd_1234", for: "genericPassword")  // save
        #expect(try store.getValue(for: "genericPassword") == "pwd_1234")  // read
        try store.setValue("pwd_1235", for: "genericPassword")  // update through upsert
        #expect(try store.getValue(for: "genericPassword") == "pwd_1235")
        try store.removeValue(for: "genericPassword")  // remove
        #expect(try store.getValue(for: "genericPassword") == nil)
        try store.setValue("a", for: "first")  // remove all for the service / server
        try store.setValue("b", for: "second")
        try store.removeAllValues()
        #expect(try store.getValue(for: "first") == nil)
        #expect(try store.getValue(for: "second") == nil)
    }

    @Test func tokenNamingPitfallAndItsFix() throws {
        let token = try newClient("pitfall", groups: ["tokens"])
        let access = ["service": "com.example.app", "account": "user@example.com", "value": "access"]
        #expect(try http.json("POST", "/v1/items/genericPassword", access, token: token).status == 201)
        var refresh = access
        refresh["value"] = "refresh"
        let clash = try http.json("POST", "/v1/items/genericPassword", refresh, token: token)
        #expect(clash.status == 409)
        #expect(clash.json["error"] as? String == "errSecDuplicateItem")
        // The fix: one account per token kind.
        for kind in ["accessToken", "refreshToken"] {
            let body = ["service": "com.example.fixed", "account": kind, "value": kind + "-value"]
            #expect(try http.json("POST", "/v1/items/genericPassword", body, token: token).status == 201)
        }
        let both = try http.send("GET", "/v1/items/genericPassword?service=com.example.fixed&limit=all", token: token)
        #expect((both.json["items"] as? [Any])?.count == 2)
    }

    @Test func isolationBetweenThreeClientsWithOverlappingGroups() throws {
        let alice = try newClient("alice", groups: ["alice", "shared"])
        let bob = try newClient("bob", groups: ["bob", "shared"])
        let carol = try newClient("carol", groups: ["carol"])
        let add = { (token: String, body: [String: Any]) in try self.http.json("POST", "/v1/items/genericPassword", body, token: token) }
        #expect(try add(alice, ["service": "iso", "account": "private", "value": "a"]).status == 201)
        #expect(try add(alice, ["service": "iso", "account": "team", "accessGroup": "shared", "value": "s"]).status == 201)
        #expect(try add(bob, ["service": "iso", "account": "private", "value": "b"]).status == 201, "groups are in the key")

        let count = { (token: String) -> Int in
            let answer = try self.http.send("GET", "/v1/items/genericPassword?service=iso&limit=all", token: token)
            return (answer.json["items"] as? [Any])?.count ?? 0
        }
        #expect(try count(alice) == 2)
        #expect(try count(bob) == 2)
        let carolSees = try http.send("GET", "/v1/items/genericPassword?service=iso&limit=all", token: carol)
        #expect(carolSees.status == 404)
        #expect(!(carolSees.text.contains("alice") || carolSees.text.contains("shared")), "no hint of foreign items")
        #expect(try http.send("DELETE", "/v1/items/genericPassword?service=iso", token: carol).status == 404)
        #expect(try http.json("PATCH", "/v1/items/genericPassword?service=iso", ["value": "x"], token: carol).status == 404)
        let foreign = try http.send("GET", "/v1/items/genericPassword?service=iso&accessGroup=alice", token: carol)
        #expect(foreign.status == 403)
        #expect(foreign.json["error"] as? String == "errSecMissingEntitlement")
        // Bob deleting the service touches his and the shared item, never Alice's private one.
        let deleted = try http.send("DELETE", "/v1/items/genericPassword?service=iso", token: bob)
        #expect(deleted.json["deleted"] as? Int == 2)
        #expect(try count(alice) == 1)
    }

    @Test(arguments: [
        ("POST", "/v1/items/genericPassword", "{not json", 400, "errSecParam"),
        ("POST", "/v1/items/genericPassword", #"{"service":1,"value":"x"}"#, 400, "errSecParam"),
        ("POST", "/v1/items/genericPassword", #"{"service":"s","server":"x"}"#, 400, "errSecNoSuchAttr"),
        ("POST", "/v1/items/genericPassword", #"{"service":"s","generic":"%%%"}"#, 400, "errSecParam"),
        ("POST", "/v1/items/genericPassword", #"{"service":"s","value":"a","data":"YQ=="}"#, 400, "errSecParam"),
        ("POST", "/v1/items/password", #"{"service":"s"}"#, 404, "errSecNoSuchClass"),
        ("POST", "/v1/items/genericPassword", #"{"service":"s","creationDate":"2026-01-01T00:00:00.000Z"}"#, 400, "errSecParam"),
        ("PATCH", "/v1/items/genericPassword?service=bad-input", #"{"modificationDate":"2026-01-01T00:00:00.000Z"}"#, 400, "errSecParam"),
        ("PATCH", "/v1/items/genericPassword?service=bad-input", #"{"class":"key"}"#, 400, "errSecNoSuchAttr"),
        ("PATCH", "/v1/items/genericPassword?service=bad-input&limit=all", #"{"value":"x"}"#, 400, "errSecParam"),
        ("DELETE", "/v1/items/genericPassword", "", 400, "errSecParam"),
        ("GET", "/v1/items/genericPassword?port=80", "", 400, "errSecNoSuchAttr"),
    ])
    func badInputAnswersItsStatusAndChangesNothing(
        method: String, path: String, body: String, status: Int, error: String
    ) throws {
        let token = try newClient("bad-\(UUID().uuidString.prefix(8))", groups: ["bad"])
        let stored = ["service": "bad-input", "account": "a", "value": "original"]
        #expect(try http.json("POST", "/v1/items/genericPassword", stored, token: token).status == 201)
        let before = try http.send("GET", "/v1/items/genericPassword?limit=all&return=attributes,data", token: token)

        let answer = try http.send(method, path, body: body.isEmpty ? nil : Data(body.utf8), token: token)
        #expect(answer.status == status, "\(method) \(path) \(body): \(answer.text)")
        #expect(answer.json["error"] as? String == error)
        #expect(answer.json["message"] is String)

        let after = try http.send("GET", "/v1/items/genericPassword?limit=all&return=attributes,data", token: token)
        #expect(after.text == before.text, "stored items must be unchanged")
    }

    @Test func anEmptyReferenceIsNotTheWholeClass() throws {
        let token = try newClient("empty-ref", groups: ["refs"])
        for account in ["one", "two"] {
            let body = ["service": "refs", "account": account, "value": "kept"]
            #expect(try http.json("POST", "/v1/items/genericPassword", body, token: token).status == 201)
        }
        let patch = try http.json("PATCH", "/v1/items/genericPassword/", ["value": "oops"], token: token)
        #expect(patch.status == 404)
        let read = try http.send("GET", "/v1/items/genericPassword?service=refs&limit=all&return=data", token: token)
        let values = (read.json["items"] as? [[String: Any]])?.compactMap { $0["value"] as? String }
        #expect(values == ["kept", "kept"])
    }

    @Test func theLastAdminCannotBeRevoked() throws {
        let refused = try http.send("DELETE", "/v1/admin/clients/admin", token: admin)
        #expect(refused.status == 400)
        #expect(refused.json["error"] as? String == "errSecParam")
        #expect(try http.send("GET", "/v1/admin/clients", token: admin).status == 200, "still administrable")

        // With a second admin, the first may go.
        let second = try http.json("POST", "/v1/admin/clients", ["name": "admin2", "accessGroups": ["ops"], "role": "admin"], token: admin)
        let secondToken = try #require(second.json["token"] as? String)
        #expect(try http.send("DELETE", "/v1/admin/clients/admin", token: secondToken).status == 200)
        #expect(try http.send("GET", "/v1/admin/clients", token: admin).status == 401)
    }

    @Test func headAnswersLikeGetWithoutABody() throws {
        let response = try http.send("HEAD", "/v1/health")
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.body.isEmpty)
    }
}
