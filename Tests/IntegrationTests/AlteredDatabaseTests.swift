import Foundation
import KeychaindTesting
import Testing

/// The database is not trusted (docs/security.md, "write access to the database"): numbers and
/// dates written into it by hand, read by the real binary, never stop the server (issue 40,
/// finding 1: every date conversion on outside input saturates instead of trapping).
@Suite(.serialized)
struct AlteredDatabaseTests {
    func sqlite(_ dataDir: URL, _ statement: String) throws {
        let result = try Command.run(["sqlite3", dataDir.appendingPathComponent("keychain.db").path, statement])
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test func datesBeyondWhatMillisecondsHoldAreAnsweredAsTheLastDateNotACrash() throws {
        let server = try KeychaindProcess()
        let admin = try server.adminToken()
        let add = try server.client().json(
            "POST", "/v1/items/genericPassword", ["service": "dates.example.com", "account": "a", "value": "v"], token: admin)
        #expect(add.status == 201, "\(add.text)")
        #expect(server.stop() == 0)
        // A REAL far past Int64's milliseconds, and the largest integer.
        try sqlite(server.dataDir, #"UPDATE items SET "creationDate" = 1e300, "modificationDate" = 9223372036854775807"#)
        let restarted = try KeychaindProcess(dataDir: server.dataDir)
        defer { restarted.stop() }
        let http = restarted.client()
        let read = try http.send(
            "GET", "/v1/items/genericPassword?service=dates.example.com&return=attributes", token: admin)
        #expect(read.status == 200, "\(read.text)")
        let item = read.json["item"] as? [String: Any]
        #expect(item?["creationDate"] as? String == "9999-12-31T23:59:59.999Z")
        #expect(item?["modificationDate"] as? String == "9999-12-31T23:59:59.999Z")
        // An update's date is later than the stored one: not past Int64's last.
        let update = try http.json(
            "PATCH", "/v1/items/genericPassword?service=dates.example.com", ["value": "w"], token: admin)
        #expect(update.status == 200, "\(update.text)")
        #expect(try http.send("GET", "/v1/health").status == 200)
    }

    @Test func aRefreshRecordWithAnImpossibleFailureCountIsNoSettingNotACrash() throws {
        let provider = try OAuthServer()
        defer { provider.stop() }
        let server = try KeychaindProcess(environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "0"])
        _ = try provider.register("count.example.com", on: server)
        #expect(server.stop() == 0)
        try sqlite(
            server.dataDir,
            #"UPDATE items SET "generic" = CAST(json_set(CAST("generic" AS TEXT), '$.failures', 9223372036854775807) AS BLOB) "#
                + #"WHERE "accessGroup" = 'keychaind.refresh'"#)
        try provider.control(mode: "error")
        let restarted = try KeychaindProcess(dataDir: server.dataDir, environment: ["KEYCHAIND_REFRESH_INTERVAL_SECONDS": "1"])
        defer { restarted.stop() }
        let admin = try restarted.adminToken()
        let fetch = try restarted.client().send("GET", "/v1/tokens/count.example.com/authorization", token: admin)
        #expect(fetch.status == 404, "\(fetch.text)")
        #expect(try restarted.client().send("GET", "/v1/tokens/count.example.com/refresh", token: admin).status == 404)
        Thread.sleep(forTimeInterval: 2)
        #expect(restarted.process.isRunning)
        #expect(try provider.stats().calls == 0)
    }
}
