import Foundation
import KeychainTestSupport
import Testing

/// Vaults made by release b711b08 (`Tests/Fixtures/README.md`), opened by this build: its data
/// directory served in place, its sealed backup restored, its PostgreSQL database served, each
/// read back whole (items of every class, tokens in both namings, the refresh setting, the
/// client, secrets of both key terms). Every later migration must keep these green (issue 41).
@Suite struct UpgradeFixtureTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/b711b08")

    static func fixture(_ name: String) -> URL { fixtures.appendingPathComponent(name) }

    static func fixtureText(_ name: String) throws -> String {
        try String(contentsOf: fixture(name), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A copy of fixture directory `name` in a fresh temporary directory (0700, its files 0600,
    /// as keychaind keeps them: git keeps neither mode).
    static func copyOfDirectory(_ name: String) throws -> URL {
        let copy = KeychaindProcess.temporaryDirectory().appendingPathComponent("data")
        try FileManager.default.copyItem(at: fixture(name), to: copy)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: copy.path)
        for file in try FileManager.default.contentsOfDirectory(atPath: copy.path) {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: copy.appendingPathComponent(file).path)
        }
        return copy
    }

    @Test func theOldDataDirectoryIsServedWithEverythingItHeld() throws {
        let dataDir = try Self.copyOfDirectory("sqlite-data")
        let server = try KeychaindProcess(dataDir: dataDir)
        defer { server.stop() }
        try OldReleaseContents.expectServed(
            by: server.client(), admin: server.adminToken(), client: Self.fixtureText("sqlite-client.token"))
    }

    @Test func theOldBackupRestoresWithEverythingItHeld() throws {
        let keys = try Self.copyOfDirectory("sqlite-data")
        let dataDir = KeychaindProcess.temporaryDirectory().appendingPathComponent("restored")
        let restore = try KeychaindProcess(
            arguments: [
                "restore", "--from", Self.fixture("sqlite-backup.kcbackup").path,
                "--master-key", keys.appendingPathComponent("master.key").path, "--data-dir", dataDir.path,
            ],
            waitForListening: false)
        #expect(restore.waitForExit() == 0, "\(restore.log)")
        let server = try KeychaindProcess(dataDir: dataDir)
        defer { server.stop() }
        try OldReleaseContents.expectServed(
            by: server.client(), admin: Self.fixtureText("sqlite-data/admin.token"),
            client: Self.fixtureText("sqlite-client.token"))
    }

    @Test func theOldPostgreSQLDatabaseIsServedWithEverythingItHeld() throws {
        let postgres = try ThrowawayPostgres.shared()
        let database = try PGCluster.newDatabase(on: postgres)
        try postgres.runClient(
            "psql", ["-q", "-v", "ON_ERROR_STOP=1", "-d", database, "-f", Self.fixture("postgresql.sql").path])
        let dataDir = try Self.copyOfDirectory("postgresql-data")
        let server = try KeychaindProcess(
            dataDir: dataDir, environment: PGCluster.environment(url: PGCluster.url(postgres, database: database)))
        defer { server.stop() }
        try OldReleaseContents.expectServed(
            by: server.client(), admin: server.adminToken(), client: Self.fixtureText("postgresql-client.token"))
    }
}

/// What `Tests/Fixtures/make-fixtures.sh` stored with the old release, and the reads that must
/// answer it. Secrets sealed under term 1 came before the rotation, under term 2 after it.
enum OldReleaseContents {
    static func expectServed(by http: HTTPTestClient, admin: String, client: String) throws {
        let vault = try http.send("GET", "/v1/admin/vault", token: admin)
        #expect(vault.status == 200 && vault.json["terms"] as? Int == 2 && vault.json["currentTerm"] as? Int == 2, "\(vault.text)")

        // Term 1.
        let alice = try item(http, "genericPassword?service=fixture.example.com&account=alice", admin)
        #expect(alice["value"] as? String == "generic-secret-term-1")
        #expect(alice["label"] as? String == "fixture generic" && alice["comment"] as? String == "made by b711b08")
        #expect(alice["generic"] as? String == Data("generic-attribute".utf8).base64EncodedString())
        let bob = try item(http, "internetPassword?server=fixture.example.com&account=bob", admin)
        #expect(bob["value"] as? String == "internet-secret-term-1")
        #expect(bob["protocol"] as? String == "https" && bob["port"] as? Int == 8443 && bob["path"] as? String == "/login")
        let certificate = try item(http, "certificate?label=fixture%20certificate", admin)
        #expect(certificate["data"] as? String == der("certificate.der"))
        #expect(try tokens(http, "fixture-api", admin) == ["access-fixture-api", "refresh-fixture-api", "2035-01-01T00:00:00.000Z"])
        let header = try http.send("GET", "/v1/tokens/fixture-api/authorization", token: admin)
        #expect(header.json["Authorization"] as? String == "Bearer access-fixture-api", "\(header.text)")
        // The client's token still authenticates, and reads what it stored in its group.
        let owned = try item(http, "genericPassword?service=fixture.app&account=app-user", client)
        #expect(owned["value"] as? String == "client-secret-term-1" && owned["accessGroup"] as? String == "app")
        let clients = try http.send("GET", "/v1/admin/clients", token: admin)
        #expect(clients.text.contains(#""name":"fixture-app""#), "\(clients.text)")

        // Term 2.
        let key = try item(http, "key?applicationTag=\(Data("fixture.key".utf8).base64EncodedString())", admin)
        #expect(key["data"] as? String == der("key.der") && key["keyClass"] as? String == "private")
        let identity = try item(http, "identity?label=fixture%20identity", admin)
        #expect(identity["certificate"] as? String == der("identity-certificate.der"))
        #expect(identity["privateKey"] as? String == der("identity-key.der"))
        #expect(try tokens(http, "fixture-api?user=carol", admin) == ["access-carol", "refresh-carol", ""])
        #expect(try tokens(http, "fixture-refresh", admin) == ["access-fixture-refresh", "", "2035-01-01T00:00:00.000Z"])
        let setting = try http.send("GET", "/v1/tokens/fixture-refresh/refresh", token: admin)
        #expect(setting.status == 200, "\(setting.text)")
        #expect(setting.json["tokenEndpoint"] as? String == "http://127.0.0.1:9/token")
        #expect(setting.json["grant"] as? String == "client_credentials" && setting.json["clientId"] as? String == "fixture-client")
        #expect(setting.json["scope"] as? String == "read" && setting.json["refreshBefore"] as? Int == 60)
        #expect(setting.json["state"] as? String == "ok", "\(setting.text)")
        let dave = try item(http, "genericPassword?service=fixture.example.com&account=dave", admin)
        #expect(dave["value"] as? String == "generic-secret-term-2")

        // And the upgraded vault takes writes.
        let added = try http.json(
            "POST", "/v1/items/genericPassword", ["service": "fixture.example.com", "account": "erin", "value": "new"], token: admin)
        #expect(added.status == 201, "\(added.text)")
    }

    /// The one item `query` (class and query string) finds, with its attributes and data.
    static func item(_ http: HTTPTestClient, _ query: String, _ token: String) throws -> [String: Any] {
        let answer = try http.send("GET", "/v1/items/\(query)&return=attributes,data", token: token)
        guard answer.status == 200, let item = answer.json["item"] as? [String: Any] else {
            Issue.record("GET \(query): \(answer.status) \(answer.text)")
            return [:]
        }
        return item
    }

    /// `GET /v1/tokens/{naming}`: access token, refresh token and expiry ("" for null).
    static func tokens(_ http: HTTPTestClient, _ naming: String, _ token: String) throws -> [String] {
        let answer = try http.send("GET", "/v1/tokens/\(naming)", token: token)
        #expect(answer.status == 200, "GET /v1/tokens/\(naming): \(answer.text)")
        return ["accessToken", "refreshToken", "expiresAt"].map { answer.json[$0] as? String ?? "" }
    }

    /// A fixture file's bytes in base64, as the item routes answer data.
    static func der(_ name: String) -> String? {
        (try? Data(contentsOf: UpgradeFixtureTests.fixture(name)))?.base64EncodedString()
    }
}
