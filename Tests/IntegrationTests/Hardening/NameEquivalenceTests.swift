import Foundation
import KeychaindTesting
import Testing

/// Issue 29, item 1: names that decide access compare byte for byte. `café` precomposed (NFC,
/// `caf%C3%A9`) and decomposed (NFD, `cafe%CC%81`) are one name to Swift's `==` but two groups to
/// SQLite and the sealing AAD; a client of one group must not reach the other's items by naming it.
@Suite(.serialized)
struct NameEquivalenceTests {
    static let nfcGroup = "caf%C3%A9"
    static let nfdGroup = "cafe%CC%81"

    /// Raw JSON, so the test decides the exact bytes of each name (`\u0301` is the combining acute).
    private func createClient(_ http: HTTPTestClient, admin: String, json: String) throws -> HTTPTestClient.Response {
        try http.send("POST", "/v1/admin/clients", body: Data(json.utf8), token: admin)
    }

    @Test func aGroupNotInNFCIsRefusedAtClientCreation() throws {
        let server = try KeychaindProcess()
        defer { server.stop() }
        let http = server.client()
        let admin = try server.adminToken()
        let refused = try createClient(http, admin: admin, json: #"{"name":"decomposed","accessGroups":["cafe\u0301"]}"#)
        #expect(refused.status == 400, "\(refused.text)")
        #expect(refused.json["status"] as? Int == -50)
        #expect(refused.json["error"] as? String == "errSecParam")
        #expect((refused.json["detail"] as? String ?? "").contains("NFC"))
        // Nothing was created; the precomposed spelling is accepted.
        #expect(!(try http.send("GET", "/v1/admin/clients", token: admin).text.contains("decomposed")))
        let accepted = try createClient(http, admin: admin, json: #"{"name":"precomposed","accessGroups":["caf\u00e9"]}"#)
        #expect(accepted.status == 201, "\(accepted.text)")
    }

    /// A vault created before NFC was enforced may hold a client of the NFD group: it stays
    /// usable for its own items and reaches none of the NFC group's, by any spelling.
    @Test func aClientOfTheDecomposedGroupCannotReachThePrecomposedGroupsItems() throws {
        let dataDir = KeychaindProcess.temporaryDirectory().appendingPathComponent("data")
        let attackerToken = "kc_" + String(repeating: "A", count: 43)
        var victimToken = ""
        do {
            let server = try KeychaindProcess(dataDir: dataDir)
            defer { server.stop() }
            let http = server.client()
            let created = try createClient(
                http, admin: try server.adminToken(), json: #"{"name":"victim","accessGroups":["caf\u00e9"]}"#)
            #expect(created.status == 201, "\(created.text)")
            victimToken = try #require(created.json["token"] as? String)
            let added = try http.json(
                "POST", "/v1/items/genericPassword", ["service": "payroll", "account": "db", "value": "victim-secret"],
                token: victimToken)
            #expect(added.status == 201, "\(added.text)")
        }
        try Self.insertLegacyClient(named: "attacker", group: "cafe\u{301}", token: attackerToken, into: dataDir)

        let server = try KeychaindProcess(dataDir: dataDir)
        defer { server.stop() }
        let http = server.client()
        // Naming the victim's group in its own (NFD) spelling: its own group, which holds nothing.
        let ownSpelling = "/v1/items/genericPassword?service=payroll&accessGroup=\(Self.nfdGroup)"
        #expect(try http.send("GET", ownSpelling + "&return=attributes,data", token: attackerToken).status == 404)
        // Naming it in the NFC spelling, which the attacker lacks: refused as another group.
        let victimSpelling = "/v1/items/genericPassword?service=payroll&accessGroup=\(Self.nfcGroup)"
        let read = try http.send("GET", victimSpelling + "&return=attributes,data", token: attackerToken)
        #expect(read.status == 403, "\(read.text)")
        #expect(!read.text.contains("victim-secret"))
        #expect(try http.send("GET", "/v1/items/genericPassword?service=payroll", token: attackerToken).status == 404)
        #expect(try http.send("DELETE", victimSpelling, token: attackerToken).status == 403)
        #expect(try http.send("DELETE", "/v1/items/genericPassword?service=payroll", token: attackerToken).status == 404)
        let moved = try http.json(
            "POST", "/v1/items/genericPassword",
            ["service": "planted", "accessGroup": "caf\u{E9}", "value": "x"], token: attackerToken)
        #expect(moved.status == 403, "\(moved.text)")
        // The victim's item is still there, unchanged.
        let own = try http.send(
            "GET", "/v1/items/genericPassword?service=payroll&return=attributes,data", token: victimToken)
        #expect(own.status == 200)
        #expect((own.json["item"] as? [String: Any])?["value"] as? String == "victim-secret")
        // The attacker's own group still works for it.
        let added = try http.send(
            "POST", "/v1/items/genericPassword",
            body: Data(#"{"service":"own","value":"mine","accessGroup":"cafe\u0301"}"#.utf8), token: attackerToken)
        #expect(added.status == 201, "\(added.text)")
        #expect(try http.send("GET", "/v1/items/genericPassword?service=own", token: victimToken).status == 404)
    }

    /// Writes a client row as a vault from before the NFC rule could hold it (the server stopped).
    private static func insertLegacyClient(named name: String, group: String, token: String, into dataDir: URL) throws {
        let script = """
            import hashlib, json, sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute("INSERT INTO clients (name, access_groups, role, created) VALUES (?, ?, 'client', 0)",
                       (sys.argv[2], json.dumps([sys.argv[3]], ensure_ascii=False)))
            db.execute("INSERT INTO tokens (accessor, token_hash, client, issued) VALUES ('kca_' || lower(hex(randomblob(16))), ?, ?, 0)",
                       (hashlib.sha256(sys.argv[4].encode()).digest(), sys.argv[2]))
            db.commit()
            """
        let database = dataDir.appendingPathComponent("keychain.db").path
        let result = try Command.run(["python3", "-c", script, database, name, group, token])
        #expect(result.status == 0, "\(result.stderr)")
    }
}
