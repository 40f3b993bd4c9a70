import Foundation
import KeychainAPI
import KeychainCore
import KeychaindTesting
import KeychainHTTP
import Testing

/// The real app (TestApp: SQLite in a temporary directory) in process, with its first admin;
/// tests add clients whose groups overlap through the admin route.
final class TestServer: Sendable {
    let app: TestApp
    var adminToken: String { app.adminToken }

    /// Over `app`, or a new in-process app.
    init(_ app: TestApp? = nil) throws {
        if let app { self.app = app } else { self.app = try TestApp() }
    }

    deinit { app.stop() }

    /// Creates a client through the admin route and returns its token.
    func client(_ name: String, groups: [String]) throws -> String {
        let answer = send(.post, "/v1/admin/clients", token: adminToken,
                          body: #"{"name":"\#(name)","accessGroups":[\#(groups.map { "\"\($0)\"" }.joined(separator: ","))]}"#)
        #expect(answer.status == 201)
        return try #require(answer.json["token"]?.stringValue)
    }

    func send(_ method: HTTPMethod, _ target: String, token: String?, body: String? = nil) -> Answer {
        let response = app.respond(method, target, token: token, body: body)
        return Answer(status: response.status, json: response.json)
    }

    /// Every stored row (for "nothing changed" checks), as comparable text.
    func snapshot() throws -> [String] {
        try ItemClass.storedClasses.flatMap { itemClass in
            try app.items.find(ItemFilter(itemClass: itemClass, accessGroups: ["app", "shared", "other", "stranger", "root"],
                                      equal: [:]), limit: nil, after: nil, reading: .all).items.map { item in
                "\(itemClass) \(item.persistentRef) \(item.attributes.sorted { $0.key.name < $1.key.name }.map { "\($0.key.name)=\($0.value)" }) \(item.secret?.copyBytes() ?? [])"
            }
        }
    }
}

struct Answer {
    let status: Int
    let json: JSONValue
    var item: JSONValue? { json["item"] }
    var items: [JSONValue] {
        if case .array(let values)? = json["items"] { return values }
        return []
    }
    var osStatus: Int64? { if case .integer(let n)? = json["status"] { n } else { nil } }
}

/// The seeds' SecureStore wrapper (seed 000), over HTTP.
struct SecureStore {
    let server: TestServer
    let token: String
    let itemClass: String
    /// The wrapper's base query as query-string parameters and as JSON members.
    let query: [(String, String, String)]  // name, query-string value, JSON literal

    var queryString: String { query.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)" }.joined(separator: "&") }
    var jsonMembers: String { query.map { "\"\($0.0)\":\($0.2)" }.joined(separator: ",") }

    func setValue(_ value: String, for account: String) throws {
        let lookup = server.send(.get, "/v1/items/\(itemClass)?\(queryString)&account=\(account)&return=none", token: token)
        switch lookup.status {
        case 200:
            let update = server.send(.patch, "/v1/items/\(itemClass)?\(queryString)&account=\(account)", token: token,
                                     body: #"{"value":"\#(value)"}"#)
            #expect(update.status == 200)
            #expect(update.json["updated"] == .integer(1))
        case 404:
            let add = server.send(.post, "/v1/items/\(itemClass)", token: token,
                                  body: #"{\#(jsonMembers),"account":"\#(account)","value":"\#(value)"}"#)
            #expect(add.status == 201)
        default:
            Issue.record("lookup answered \(lookup.status) \(lookup.json)")
        }
    }

    func getValue(for account: String) -> String? {
        let answer = server.send(.get, "/v1/items/\(itemClass)?\(queryString)&account=\(account)&limit=one&return=attributes,data", token: token)
        if answer.status == 404 { return nil }
        #expect(answer.status == 200)
        return answer.item?["value"]?.stringValue
    }

    func removeValue(for account: String) {
        let answer = server.send(.delete, "/v1/items/\(itemClass)?\(queryString)&account=\(account)", token: token)
        #expect(answer.status == 200 || answer.status == 404)
    }

    func removeAllValues() {
        let answer = server.send(.delete, "/v1/items/\(itemClass)?\(queryString)", token: token)
        #expect(answer.status == 200 || answer.status == 404)
    }
}

@Suite struct SecureStoreFlowTests {
    static let stores: [(String, [(String, String, String)])] = [
        ("genericPassword", [("service", "someService", "\"someService\"")]),
        ("internetPassword", [
            ("server", "someServer", "\"someServer\""), ("port", "8080", "8080"), ("path", "somePath", "\"somePath\""),
            ("securityDomain", "someDomain", "\"someDomain\""), ("protocol", "https", "\"https\""),
            ("authenticationType", "httpBasic", "\"httpBasic\""),
        ]),
    ]

    func store(_ index: Int) throws -> SecureStore {
        let server = try TestServer()
        let token = try server.client("app", groups: ["app"])
        return SecureStore(server: server, token: token, itemClass: Self.stores[index].0, query: Self.stores[index].1)
    }

    @Test(arguments: [0, 1]) func save(_ index: Int) throws {
        try store(index).setValue("pwd_1234", for: "genericPassword")
    }

    @Test(arguments: [0, 1]) func read(_ index: Int) throws {
        let store = try store(index)
        try store.setValue("pwd_1234", for: "genericPassword")
        #expect(store.getValue(for: "genericPassword") == "pwd_1234")
    }

    @Test(arguments: [0, 1]) func upsert(_ index: Int) throws {
        let store = try store(index)
        try store.setValue("pwd_1234", for: "genericPassword")
        try store.setValue("pwd_1235", for: "genericPassword")
        #expect(store.getValue(for: "genericPassword") == "pwd_1235")
    }

    @Test(arguments: [0, 1]) func remove(_ index: Int) throws {
        let store = try store(index)
        try store.setValue("pwd_1234", for: "genericPassword")
        store.removeValue(for: "genericPassword")
        #expect(store.getValue(for: "genericPassword") == nil)
        store.removeValue(for: "genericPassword")
    }

    @Test(arguments: [0, 1]) func removeAll(_ index: Int) throws {
        let store = try store(index)
        try store.setValue("pwd_1234", for: "genericPassword")
        try store.setValue("pwd_1235", for: "genericPassword2")
        store.removeAllValues()
        #expect(store.getValue(for: "genericPassword") == nil)
        #expect(store.getValue(for: "genericPassword2") == nil)
    }
}

@Suite struct ItemRouteTests {
    @Test func addAnswersTheItem() throws {
        let server = try TestServer()
        let token = try server.client("app", groups: ["app", "shared"])
        let added = server.send(.post, "/v1/items/genericPassword", token: token,
                                body: #"{"service":"api","account":"me","value":"s3cret","label":"L"}"#)
        #expect(added.status == 201)
        #expect(added.osStatus == 0)
        let item = try #require(added.item)
        #expect(item["accessGroup"] == .string("app"))
        #expect(item["accessible"] == .string("whenUnlocked"))
        #expect(item["synchronizable"] == .bool(false))
        #expect(item["persistentRef"]?.stringValue?.count == 22)
        #expect(item["value"] == nil, "no secret unless asked")
        #expect(item["creationDate"]?.stringValue?.hasSuffix("Z") == true)

        let ref = try #require(item["persistentRef"]?.stringValue)
        let byRef = server.send(.get, "/v1/items/genericPassword/\(ref)?return=data", token: token)
        #expect(byRef.status == 200)
        #expect(byRef.item?["value"] == .string("s3cret"))
        #expect(byRef.item?["data"] == .string("czNjcmV0"))
        #expect(server.send(.get, "/items/genericPassword/\(ref)", token: token).status == 200, "plain path too")
        #expect(server.send(.get, "/v1/items/internetPassword/\(ref)", token: token).status == 404)

        let none = server.send(.get, "/v1/items/genericPassword?service=api&return=none", token: token)
        #expect(none.status == 200 && none.json == .object([("status", .integer(0))]))

        let list = server.send(.get, "/v1/items/genericPassword?limit=all", token: token)
        #expect(list.items.count == 1 && list.item == nil)
        let patched = server.send(.patch, "/v1/items/genericPassword/\(ref)", token: token, body: #"{"data":"AAE="}"#)
        #expect(patched.json == .object([("status", .integer(0)), ("updated", .integer(1))]))
        let binary = server.send(.get, "/v1/items/genericPassword/\(ref)?return=data", token: token)
        #expect(binary.item?["data"] == .string("AAE=") && binary.item?["value"] == .string("\u{0}\u{1}"))
        let deleted = server.send(.delete, "/v1/items/genericPassword/\(ref)", token: token)
        #expect(deleted.json == .object([("status", .integer(0)), ("deleted", .integer(1))]))
        #expect(server.send(.get, "/v1/items/genericPassword/\(ref)", token: token).status == 404)
    }

    @Test func tokenNamingPitfallAndItsFix() throws {
        let server = try TestServer()
        let token = try server.client("app", groups: ["app"])
        // Wrong: both tokens under the same service and account (the user's e-mail).
        #expect(server.send(.post, "/v1/items/genericPassword", token: token,
                            body: #"{"service":"gus.awesome","account":"gus@naver.com","value":"access"}"#).status == 201)
        let second = server.send(.post, "/v1/items/genericPassword", token: token,
                                 body: #"{"service":"gus.awesome","account":"gus@naver.com","value":"refresh"}"#)
        #expect(second.status == 409)
        #expect(second.json["status"] == .integer(-25299))
        #expect(second.json["error"] == .string("errSecDuplicateItem"))
        // Fix 1: account names the token.
        for account in ["accessToken", "refreshToken"] {
            #expect(server.send(.post, "/v1/items/genericPassword", token: token,
                                body: #"{"service":"gus.awesome.right","account":"\#(account)","value":"v-\#(account)"}"#).status == 201)
        }
        // Fix 2: the service names the token, the account is the user.
        for service in ["gus.awesome.accessToken", "gus.awesome.refreshToken"] {
            #expect(server.send(.post, "/v1/items/genericPassword", token: token,
                                body: #"{"service":"\#(service)","account":"gus@naver.com","value":"x"}"#).status == 201)
        }
        let read = server.send(.get, "/v1/items/genericPassword?service=gus.awesome.right&account=accessToken&return=data", token: token)
        #expect(read.item?["value"] == .string("v-accessToken"))
        // The pitfall of a lookup with a non-PK attribute: not found, then the add collides.
        #expect(server.send(.get, "/v1/items/genericPassword?service=gus.awesome.right&account=accessToken&label=x", token: token).status == 404)
    }

    @Test func isolationBetweenThreeClients() throws {
        let server = try TestServer()
        let alice = try server.client("alice", groups: ["app", "shared"])
        let bob = try server.client("bob", groups: ["other", "shared"])
        let eve = try server.client("eve", groups: ["stranger"])
        #expect(server.send(.post, "/v1/items/genericPassword", token: alice, body: #"{"service":"s","account":"alice"}"#).status == 201)
        #expect(server.send(.post, "/v1/items/genericPassword", token: alice, body: #"{"service":"s","account":"both","accessGroup":"shared"}"#).status == 201)
        #expect(server.send(.post, "/v1/items/genericPassword", token: bob, body: #"{"service":"s","account":"bob"}"#).status == 201)
        #expect(server.send(.post, "/v1/items/genericPassword", token: eve, body: #"{"service":"s","account":"alice"}"#).status == 201, "no collision across groups")
        #expect(server.send(.post, "/v1/items/genericPassword", token: eve, body: #"{"service":"s","accessGroup":"shared"}"#).status == 403)

        #expect(server.send(.get, "/v1/items/genericPassword?service=s&limit=all", token: alice).items.count == 2)
        #expect(server.send(.get, "/v1/items/genericPassword?service=s&limit=all", token: bob).items.count == 2)
        #expect(server.send(.get, "/v1/items/genericPassword?service=s&limit=all", token: eve).items.count == 1)
        let foreign = server.send(.get, "/v1/items/genericPassword?account=bob", token: alice)
        #expect(foreign.status == 404 && foreign.json["detail"]?.stringValue?.contains("other") != true)
        #expect(server.send(.get, "/v1/items/genericPassword?accessGroup=other", token: alice).status == 403)
        #expect(server.send(.patch, "/v1/items/genericPassword?account=bob", token: alice, body: #"{"label":"x"}"#).status == 404)
        #expect(server.send(.delete, "/v1/items/genericPassword?account=bob", token: alice).status == 404)
        #expect(server.send(.delete, "/v1/items/genericPassword?all=true", token: eve).json["deleted"] == .integer(1))
        #expect(server.send(.get, "/v1/items/genericPassword?service=s&limit=all", token: alice).items.count == 2)
        let bobsRef = try #require(server.send(.get, "/v1/items/genericPassword?account=bob", token: bob).item?["persistentRef"]?.stringValue)
        #expect(server.send(.get, "/v1/items/genericPassword/\(bobsRef)", token: alice).status == 404)
        #expect(server.send(.delete, "/v1/items/genericPassword/\(bobsRef)", token: alice).status == 404)
        #expect(server.send(.patch, "/v1/items/genericPassword?account=alice", token: alice, body: #"{"accessGroup":"other"}"#).status == 403)
        #expect(server.send(.get, "/v1/items/genericPassword", token: nil).status == 401)
        #expect(server.send(.get, "/v1/items/genericPassword", token: "kc_nope").status == 401)
    }

    struct BadInput: Sendable, CustomTestStringConvertible {
        let method: HTTPMethod
        let target: String
        let body: String?
        let http: Int
        let status: Int64
        var testDescription: String { "\(method) \(target) \(body ?? "")" }
    }

    static let badInputs: [BadInput] = [
        BadInput(method: .post, target: "/v1/items/genericPassword", body: #"{"service":"s""#, http: 400, status: -50),
        BadInput(method: .post, target: "/v1/items/genericPassword", body: "", http: 400, status: -50),
        BadInput(method: .post, target: "/v1/items/genericPassword", body: "[1]", http: 400, status: -50),
        BadInput(method: .post, target: "/v1/items/genericPassword", body: #"{"service":42}"#, http: 400, status: -50),
        BadInput(method: .post, target: "/v1/items/internetPassword", body: #"{"port":"80"}"#, http: 400, status: -50),
        BadInput(method: .post, target: "/v1/items/genericPassword", body: #"{"server":"x"}"#, http: 400, status: -25303),
        BadInput(method: .post, target: "/v1/items/genericPassword", body: #"{"bogus":1}"#, http: 400, status: -25303),
        BadInput(method: .post, target: "/v1/items/genericPassword", body: #"{"generic":"%%%"}"#, http: 400, status: -50),
        BadInput(method: .post, target: "/v1/items/genericPassword", body: #"{"data":"AAE"}"#, http: 400, status: -50),
        BadInput(method: .post, target: "/v1/items/genericPassword", body: #"{"value":"a","data":"AAE="}"#, http: 400, status: -50),
        BadInput(method: .post, target: "/v1/items/genericPassword", body: #"{"creationDate":"2026-11-21T10:00:00.123Z"}"#, http: 400, status: -50),
        BadInput(method: .post, target: "/v1/items/genericPassword", body: #"{"persistentRef":"AAAAAAAAAAAAAAAAAAAAAA"}"#, http: 400, status: -50),
        BadInput(method: .post, target: "/v1/items/certificate", body: #"{"data":"AAEC"}"#, http: 400, status: -50),
        BadInput(method: .post, target: "/v1/items/password", body: #"{"service":"s"}"#, http: 404, status: -25306),
        BadInput(method: .get, target: "/v1/items/password", body: nil, http: 404, status: -25306),
        BadInput(method: .get, target: "/v1/items/genericPassword?port=1", body: nil, http: 400, status: -25303),
        BadInput(method: .get, target: "/v1/items/genericPassword?limit=0", body: nil, http: 400, status: -50),
        BadInput(method: .get, target: "/v1/items/genericPassword?return=secret", body: nil, http: 400, status: -50),
        BadInput(method: .get, target: "/v1/items/genericPassword?isInvisible=maybe", body: nil, http: 400, status: -50),
        BadInput(method: .patch, target: "/v1/items/genericPassword?service=s&limit=all", body: #"{"label":"x"}"#, http: 400, status: -50),
        BadInput(method: .patch, target: "/v1/items/genericPassword?service=s&caseInsensitive=true", body: #"{"label":"x"}"#, http: 400, status: -50),
        BadInput(method: .patch, target: "/v1/items/genericPassword?service=s&return=data", body: #"{"label":"x"}"#, http: 400, status: -50),
        BadInput(method: .patch, target: "/v1/items/genericPassword?service=s", body: #"{"class":"genericPassword"}"#, http: 400, status: -25303),
        BadInput(method: .patch, target: "/v1/items/genericPassword?service=s", body: #"{"return":"data"}"#, http: 400, status: -25303),
        BadInput(method: .patch, target: "/v1/items/genericPassword?service=s", body: #"{"modificationDate":"2026-11-21T10:00:00.123Z"}"#, http: 400, status: -50),
        BadInput(method: .patch, target: "/v1/items/genericPassword?service=s", body: #"{"value":1}"#, http: 400, status: -50),
        BadInput(method: .patch, target: "/v1/items/genericPassword?service=s", body: #"{"value":"a","data":"AAE="}"#, http: 400, status: -50),
        BadInput(method: .patch, target: "/v1/items/genericPassword?service=s", body: "{", http: 400, status: -50),
        BadInput(method: .patch, target: "/v1/items/genericPassword?service=s", body: #"{"account":"b"}"#, http: 409, status: -25299),
        BadInput(method: .delete, target: "/v1/items/genericPassword", body: nil, http: 400, status: -50),
        BadInput(method: .delete, target: "/v1/items/genericPassword?service=s&limit=one", body: nil, http: 400, status: -50),
        BadInput(method: .delete, target: "/v1/items/genericPassword?service=s&caseInsensitive=true", body: nil, http: 400, status: -50),
    ]

    @Test(arguments: badInputs)
    func badInputChangesNothing(_ input: BadInput) throws {
        let server = try TestServer()
        let token = try server.client("app", groups: ["app"])
        #expect(server.send(.post, "/v1/items/genericPassword", token: token, body: #"{"service":"s","account":"a","value":"v"}"#).status == 201)
        #expect(server.send(.post, "/v1/items/genericPassword", token: token, body: #"{"service":"s","account":"b","value":"v"}"#).status == 201)
        let before = try server.snapshot()
        let answer = server.send(input.method, input.target, token: token, body: input.body)
        #expect(answer.status == input.http)
        #expect(answer.json["status"] == .integer(input.status))
        #expect(answer.json["message"]?.stringValue?.isEmpty == false)
        #expect(try server.snapshot() == before)
    }

    @Test func deleteReturnIsIgnoredAndAllTrueWipesTheClass() throws {
        let server = try TestServer()
        let token = try server.client("app", groups: ["app"])
        for account in ["a", "b"] {
            _ = server.send(.post, "/v1/items/genericPassword", token: token, body: #"{"account":"\#(account)"}"#)
        }
        #expect(server.send(.delete, "/v1/items/genericPassword?account=a&return=data", token: token).json["deleted"] == .integer(1))
        #expect(server.send(.delete, "/v1/items/genericPassword?all=true", token: token).json["deleted"] == .integer(1))
    }
}

@Suite struct ClientRouteTests {
    @Test func createListReissueRevoke() throws {
        let server = try TestServer()
        let created = server.send(.post, "/v1/admin/clients", token: server.adminToken,
                                  body: #"{"name":"app","accessGroups":["a","b"]}"#)
        #expect(created.status == 201)
        let token = try #require(created.json["token"]?.stringValue)
        #expect(token.hasPrefix("kc_"))
        #expect(created.json["role"] == .string("client"))
        #expect(server.send(.post, "/v1/admin/clients", token: server.adminToken, body: #"{"name":"app","accessGroups":["other"]}"#).status == 409)
        #expect(server.send(.post, "/v1/admin/clients", token: server.adminToken, body: #"{"name":"x","accessGroups":"a"}"#).status == 400)
        #expect(server.send(.post, "/v1/admin/clients", token: server.adminToken, body: #"{"name":"x","accessGroups":[],"extra":1}"#).status == 400)

        let list = server.send(.get, "/v1/admin/clients", token: server.adminToken)
        #expect(list.status == 200)
        guard case .array(let clients)? = list.json["clients"] else { Issue.record("no clients"); return }
        #expect(clients.count == 2)
        #expect(!String(decoding: list.json.serialized(), as: UTF8.self).contains(token))

        #expect(server.send(.get, "/v1/admin/clients", token: token).status == 403, "not an admin")
        #expect(server.send(.post, "/v1/items/genericPassword", token: token, body: "{}").status == 201)

        let reissued = server.send(.post, "/v1/admin/clients/app/token", token: server.adminToken)
        #expect(reissued.status == 200)
        let newToken = try #require(reissued.json["token"]?.stringValue)
        #expect(server.send(.get, "/v1/items/genericPassword", token: token).status == 401, "old token revoked")
        #expect(server.send(.get, "/v1/items/genericPassword", token: newToken).status == 200)

        #expect(server.send(.delete, "/v1/admin/clients/app", token: server.adminToken).status == 200)
        #expect(server.send(.get, "/v1/items/genericPassword", token: newToken).status == 401)
        #expect(server.send(.delete, "/v1/admin/clients/app", token: server.adminToken).status == 404)
        #expect(server.send(.post, "/v1/admin/clients/app/token", token: server.adminToken).status == 404)
    }
}
