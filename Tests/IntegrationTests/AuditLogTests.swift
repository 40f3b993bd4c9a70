import Foundation
import KeychaindTesting
import Testing

/// The audit log against the real binary (docs/operations.md).
@Suite(.serialized)
struct AuditLogTests {
    static let secretValue = "s3cret-Value-0bserve"
    static let service = "svc-Audit-Visible"
    static let account = "acct-Audit-Visible"
    static let label = "label-Audit-Visible"
    static let generic = Data("generic-Audit-Bytes".utf8).base64EncodedString()

    static func entries(_ server: KeychaindProcess) throws -> [[String: Any]] {
        let text = try String(contentsOf: server.dataDir.appendingPathComponent("audit.log"), encoding: .utf8)
        return try text.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test func entriesNameWhoAndWhatAndHoldNoSecretTokenOrAttributeValue() throws {
        // At `debug`, so that the request log's lines (stderr) are checked as well.
        let server = try KeychaindProcess(environment: ["KEYCHAIND_LOG_LEVEL": "debug"])
        let admin = try server.adminToken()
        let http = server.client()
        let created = try http.json("POST", "/v1/admin/clients", ["name": "app1", "accessGroups": ["g1"]], token: admin)
        #expect(created.status == 201)
        let token = try #require(created.json["token"] as? String)

        let add = try http.json(
            "POST", "/v1/items/genericPassword",
            ["service": Self.service, "account": Self.account, "label": Self.label, "generic": Self.generic,
             "value": Self.secretValue],
            token: token)
        #expect(add.status == 201)
        let ref = try #require((add.json["item"] as? [String: Any])?["persistentRef"] as? String)
        let query = "service=\(Self.service)&account=\(Self.account)"
        #expect(try http.send("GET", "/v1/items/genericPassword?\(query)&return=data", token: token).status == 200)
        #expect(try http.send("GET", "/v1/items/genericPassword/\(ref)?return=data", token: token).status == 200)
        #expect(
            try http.json("PATCH", "/v1/items/genericPassword?\(query)", ["label": "new-\(Self.label)"], token: token)
                .status == 200)
        #expect(try http.send("GET", "/v1/items/genericPassword?service=nothing", token: token).status == 404)
        #expect(try http.send("GET", "/v1/items/genericPassword", token: "kc_forged-token-value").status == 401)
        #expect(try http.send("GET", "/v1/no/such/\(Self.secretValue)", token: token).status == 404)
        #expect(try http.send("DELETE", "/v1/items/genericPassword/\(ref)", token: token).status == 200)
        #expect(server.stop() == 0)

        let path = server.dataDir.appendingPathComponent("audit.log").path
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        // Nothing readable: no secret (as text or base64), no token, no attribute value, no raw path.
        let raw = try String(contentsOfFile: path, encoding: .utf8)
        for forbidden in [
            Self.secretValue, Data(Self.secretValue.utf8).base64EncodedString(), token, admin, "kc_forged",
            Self.service, Self.account, Self.label, Self.generic, "generic-Audit-Bytes", "/no/such",
        ] {
            #expect(!raw.contains(forbidden), "the audit log contains \(forbidden)")
            #expect(!server.log.contains(forbidden), "the request log contains \(forbidden)")
        }
        #expect(server.log.contains("DELETE /items/{class}/{persistentRef} 200"), "\(server.log)")

        let entries = try Self.entries(server)
        let time = #/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/#
        for entry in entries {
            #expect((entry["time"] as? String).map { $0.wholeMatch(of: time) != nil } == true, "\(entry)")
            #expect(entry["route"] is String && entry["method"] is String && entry["status"] is Int)
            #expect(entry["remote"] as? String == "127.0.0.1")
            #expect(entry["phase"] == nil, "attempt lines only with failClosed")
        }
        let items = entries.filter { ($0["route"] as? String)?.hasPrefix("/items/") == true }
        #expect(items.count == 7)
        let addEntry = try #require(items.first { $0["method"] as? String == "POST" })
        #expect(addEntry["client"] as? String == "app1")
        #expect(addEntry["class"] as? String == "genericPassword")
        #expect(addEntry["status"] as? Int == 201)
        #expect(addEntry["osStatus"] as? Int == 0)
        #expect(addEntry["persistentRef"] as? String == ref, "the add's reference comes from its answer")
        let addTags = try #require(addEntry["attributes"] as? [String: String])
        #expect(Set(addTags.keys) == ["service", "account", "label", "generic"], "never value/data")
        #expect(addTags.values.allSatisfy { $0.count == 22 }, "16 bytes of HMAC as base64url")

        // The same value gives the same tag in a query string and in a JSON body.
        let search = items[1]
        let searchTags = try #require(search["attributes"] as? [String: String])
        #expect(searchTags["service"] == addTags["service"])
        #expect(searchTags["account"] == addTags["account"])
        #expect(items[2]["persistentRef"] as? String == ref, "the reference in the path")
        let patch = items[3]
        #expect(patch["method"] as? String == "PATCH")
        #expect((patch["changes"] as? [String: String])?["label"].map { $0 != addTags["label"] } == true)
        let miss = items[4]
        #expect(miss["status"] as? Int == 404 && miss["osStatus"] as? Int == -25300)
        #expect((miss["attributes"] as? [String: String])?["service"] != addTags["service"])
        let forged = items[5]
        #expect(forged["status"] as? Int == 401 && forged["osStatus"] as? Int == -25293)
        #expect(forged["client"] is NSNull)
        #expect(entries.contains { $0["route"] as? String == "unmatched" && $0["status"] as? Int == 404 })
        let delete = items[6]
        #expect(delete["method"] as? String == "DELETE" && delete["persistentRef"] as? String == ref)
        #expect(entries.contains { $0["route"] as? String == "/admin/clients" && $0["client"] as? String == "admin" })

        // The audit key survives a restart: the same value, the same tag.
        let again = try KeychaindProcess(dataDir: server.dataDir)
        #expect(
            try again.client().send("GET", "/v1/items/genericPassword?service=\(Self.service)", token: token).status
                == 404)
        #expect(again.stop() == 0)
        let last = try #require(try Self.entries(again).last { ($0["route"] as? String) == "/items/{class}" })
        #expect((last["attributes"] as? [String: String])?["service"] == addTags["service"])
    }

    /// The client's address as dotted quad, whatever the width of each octet.
    @Test(arguments: ["127.10.200.3", "127.255.0.99"])
    func remoteIsTheClientsAddress(source: String) throws {
        let server = try KeychaindProcess()
        let connection = try TestConnection(port: server.port, source: source)
        try connection.write(HTTPTestClient.head("GET", "/v1/tokens/svc/authorization", headers: [:], bodyLength: nil))
        #expect(try connection.readResponse().status == 401)
        #expect(server.stop() == 0)
        let entry = try #require(try Self.entries(server).last)
        #expect(entry["remote"] as? String == source)
    }

    @Test func failClosedRefusesBeforeChangingAnythingWhenTheLogCannotBeWritten() throws {
        let server = try KeychaindProcess(environment: ["KEYCHAIND_AUDIT_FAIL_CLOSED": "true"])
        defer { server.stop() }
        let admin = try server.adminToken()
        let http = server.client()
        let first = try http.json("POST", "/v1/items/genericPassword", ["service": "kept", "value": "x"], token: admin)
        #expect(first.status == 201)
        // Write-ahead: an attempt line, then the outcome line, for the same request id.
        let lines = try Self.entries(server).filter { $0["route"] as? String == "/items/{class}" }
        #expect(lines.map { $0["phase"] as? String } == ["attempt", nil])
        #expect(lines[0]["id"] as? Int == lines[1]["id"] as? Int)
        #expect(lines[0]["status"] == nil && lines[1]["status"] as? Int == 201)

        // The log is deleted and its path becomes a directory: nothing can be appended any more.
        let log = server.dataDir.appendingPathComponent("audit.log")
        try FileManager.default.removeItem(at: log)
        try FileManager.default.createDirectory(at: log, withIntermediateDirectories: false)

        let refused = try http.json("POST", "/v1/items/genericPassword", ["service": "lost", "value": "y"], token: admin)
        #expect(refused.status == 503)
        #expect(refused.json["status"] as? Int == -25291)
        #expect(refused.json["error"] as? String == "errSecNotAvailable")
        let deleteRefused = try http.send("DELETE", "/v1/items/genericPassword?service=kept", token: admin)
        #expect(deleteRefused.status == 503)
        #expect(server.logShows("audit log cannot be written"))

        // Writable again: the next request reopens the path; nothing was changed meanwhile.
        try FileManager.default.removeItem(at: log)
        #expect(try http.send("GET", "/v1/items/genericPassword?service=lost", token: admin).status == 404)
        #expect(try http.send("GET", "/v1/items/genericPassword?service=kept", token: admin).status == 200)
        let metrics = try http.send("GET", "/metrics", token: admin)
        #expect(metrics.text.contains("keychaind_audit_write_failures_total 4"), "two refused requests, two lines each")
        #expect(server.stop() == 0)
    }

    @Test func failClosedServerRefusesToStartWithoutAWritableLog() throws {
        let directory = KeychaindProcess.temporaryDirectory()
        let log = directory.appendingPathComponent("audit-dir")
        try FileManager.default.createDirectory(at: log, withIntermediateDirectories: true)
        let server = try KeychaindProcess(
            environment: ["KEYCHAIND_AUDIT_FAIL_CLOSED": "true", "KEYCHAIND_AUDIT_FILE": log.path],
            waitForListening: false)
        let status = server.waitForExit()
        #expect(status != nil && status != 0)
        #expect(server.log.contains("audit.file"))
    }

    @Test func failOpenKeepsServingAndCountsTheFailures() throws {
        let server = try KeychaindProcess()
        defer { server.stop() }
        let admin = try server.adminToken()
        let log = server.dataDir.appendingPathComponent("audit.log")
        try FileManager.default.removeItem(at: log)
        try FileManager.default.createDirectory(at: log, withIntermediateDirectories: false)
        let http = server.client()
        #expect(try http.json("POST", "/v1/items/genericPassword", ["service": "s"], token: admin).status == 201)
        // The line is written (and its failure counted) by the background writer within about
        // 10 ms of the answer; the scrape's own line may be counted too.
        #expect(try waitUntil {
            let text = try http.send("GET", "/metrics", token: admin).text
            return !text.contains("keychaind_audit_write_failures_total 0") && text.contains("keychaind_audit_write_failures_total")
        })
        #expect(server.stop() == 0)
    }

    @Test func disabledWritesNoLog() throws {
        let server = try KeychaindProcess(environment: ["KEYCHAIND_AUDIT_ENABLED": "false"])
        #expect(try server.client().send("GET", "/v1/health").status == 200)
        #expect(server.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: server.dataDir.appendingPathComponent("audit.log").path))
        #expect(server.log.contains("audit log disabled"))
    }
}
