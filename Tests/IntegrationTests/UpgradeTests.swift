import Foundation
import KeychainAPI
import KeychainTestSupport
import KeychaindTesting
import Testing

/// Upgrades an operator can trust (issue 41, item 6), against the real binary: a database a later
/// release migrated is refused with a message saying so and what to do, and left as it is; on
/// SQLite the database is copied before this release migrates it.
@Suite(.serialized)
struct UpgradeTests {
    @discardableResult
    func sqlite(_ database: String, _ statement: String) throws -> String {
        let result = try Command.run(["sqlite3", database, statement])
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A data directory whose database a later release migrated: `serve` exits 1 saying so (not
    /// "damaged"), names the versions and the way back, and leaves the database as it was.
    @Test func aDatabaseALaterReleaseMigratedIsRefusedAndLeftAsItIs() throws {
        let server = try KeychaindProcess()
        #expect(server.stop() == 0)
        let database = server.dataDir.appendingPathComponent("keychain.db").path
        // A fresh database is at this build's last schema version.
        let latest = try #require(Int(try sqlite(database, "PRAGMA user_version")))
        let later = latest + 1
        try sqlite(database, "PRAGMA user_version = \(later)")

        let refused = try KeychaindProcess(dataDir: server.dataDir, waitForListening: false)
        #expect(refused.waitForExit() == 1)
        let log = refused.log
        #expect(log.contains("was migrated by a later keychaind release"), "\(log)")
        #expect(log.contains("schema version is \(later), this release knows versions up to \(latest)"), "\(log)")
        #expect(log.contains("pre-migration") && log.contains("Upgrade and roll back"), "\(log)")
        #expect(!log.contains("damaged"), "\(log)")
        #expect(try sqlite(database, "PRAGMA user_version") == "\(later)")
        let files = try FileManager.default.contentsOfDirectory(atPath: server.dataDir.path)
        #expect(!files.contains { $0.contains("pre-migration") }, "\(files)")
    }

    /// A database at schema 3 (migration 4's column dropped, as a release before it left it):
    /// serving it keeps `keychain.db.pre-migration-v3-<time>` (0600, logged), which holds the
    /// items at version 3, while the live database is migrated; a second start keeps no copy.
    @Test func migratingKeepsACopyOfTheDatabaseAsItWas() throws {
        let server = try KeychaindProcess()
        let admin = try server.adminToken()
        for account in ["a", "b", "c"] {
            let add = try server.client().json(
                "POST", "/v1/items/genericPassword", ["service": "upgrade.example.com", "account": account, "value": "v-\(account)"],
                token: admin)
            #expect(add.status == 201, "\(add.text)")
        }
        #expect(server.stop() == 0)
        let database = server.dataDir.appendingPathComponent("keychain.db").path
        let latest = try sqlite(database, "PRAGMA user_version")
        // Schema 3 as it shipped: no attribute bytes, tokens in `clients` (before migration 5), no
        // KV tables nor vault identity (before migration 6), no providers, connect sessions,
        // provider holds or webhooks (before migrations 7 to 10).
        try sqlite(
            database,
            """
            DROP TABLE connect_sessions; DROP TABLE provider_holds; DROP TABLE webhook_deliveries; DROP TABLE webhooks;
            DROP TABLE kv_versions; DROP TABLE kv_secrets; DROP TABLE vault_identity;
            DROP TABLE login_roles;
            DROP TABLE oauth_providers;
            CREATE TABLE clients_v3 (
                name TEXT PRIMARY KEY, access_groups TEXT NOT NULL, role TEXT NOT NULL, created INTEGER NOT NULL,
                token_hash BLOB NOT NULL UNIQUE) STRICT;
            INSERT INTO clients_v3 SELECT c.name, c.access_groups, c.role, c.created, t.token_hash FROM clients c JOIN tokens t ON t.client = c.name;
            DROP TABLE tokens; DROP TABLE clients; ALTER TABLE clients_v3 RENAME TO clients;
            ALTER TABLE group_usage DROP COLUMN attribute_bytes; PRAGMA user_version = 3
            """)
        let rowsBefore = try sqlite(database, "SELECT persistent_ref, secret FROM items ORDER BY persistent_ref")
        #expect(!rowsBefore.isEmpty)

        let upgraded = try KeychaindProcess(dataDir: server.dataDir)
        let files = try FileManager.default.contentsOfDirectory(atPath: server.dataDir.path)
        let copies = files.filter { $0.hasPrefix("keychain.db.pre-migration-v3-") }
        #expect(copies.count == 1, "\(files)")
        let read = try upgraded.client().send(
            "GET", "/v1/items/genericPassword?service=upgrade.example.com&limit=all&return=data", token: admin)
        #expect(read.status == 200 && (read.json["items"] as? [Any])?.count == 3, "\(read.text)")
        #expect(upgraded.stop() == 0)
        #expect(try sqlite(database, "PRAGMA user_version") == latest)
        guard let name = copies.first else { return }
        let copy = server.dataDir.appendingPathComponent(name).path
        #expect(upgraded.log.contains("kept a copy of the database before migrating it") && upgraded.log.contains(copy))
        #expect(name.range(of: #"^keychain\.db\.pre-migration-v3-\d{8}T\d{6}Z$"#, options: .regularExpression) != nil, "\(name)")
        let mode = try FileManager.default.attributesOfItem(atPath: copy)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try sqlite(copy, "PRAGMA user_version") == "3")
        #expect(try sqlite(copy, "PRAGMA integrity_check") == "ok")
        #expect(try sqlite(copy, "SELECT persistent_ref, secret FROM items ORDER BY persistent_ref") == rowsBefore)
        #expect(try sqlite(copy, "SELECT count(*) FROM pragma_table_info('group_usage') WHERE name = 'attribute_bytes'") == "0")

        let again = try KeychaindProcess(dataDir: server.dataDir)
        #expect(again.stop() == 0)
        let after = try FileManager.default.contentsOfDirectory(atPath: server.dataDir.path)
        #expect(after.filter { $0.contains("pre-migration") }.count == 1, "\(after)")
        #expect(!again.log.contains("kept a copy"))
    }

    /// A vault at schema 10 holding KV secrets, every version in `kv_versions` as releases before
    /// migration 11 kept them: after the upgrade they read, list, delete and undelete as before,
    /// and a secret's next version is kept in the secret's own row, its older ones where they were.
    @Test func kvSecretsWrittenBeforeMigration11ReadAndChangeAfterIt() throws {
        let server = try KeychaindProcess()
        let admin = try server.adminToken()
        let created = try server.client().json("POST", "/v1/admin/clients", ["name": "upgrade", "accessGroups": ["team"]], token: admin)
        let token = try #require(created.json["token"] as? String, "\(created.text)")
        func kv(_ process: KeychaindProcess, _ method: String, _ path: String, _ body: [String: Any]? = nil) throws
            -> HTTPTestClient.Response
        {
            try process.client().send(
                method, "/v1/team/" + path, headers: ["X-Vault-Token": token],
                body: try body.map { try JSONSerialization.data(withJSONObject: $0) })
        }
        func value(_ response: HTTPTestClient.Response) -> String? {
            ((response.json["data"] as? [String: Any])?["data"] as? [String: Any])?["v"] as? String
        }
        for number in 1...3 {
            let write = try kv(server, "POST", "data/app", ["data": ["v": "\(number)"]])
            #expect(write.status == 200, "\(write.text)")
        }
        #expect(try kv(server, "POST", "data/other", ["data": ["v": "other"]]).status == 200)
        #expect(server.stop() == 0)
        let database = server.dataDir.appendingPathComponent("keychain.db").path
        try sqlite(
            database,
            """
            INSERT INTO kv_versions (access_group, path, version, created_time, deletion_time, destroyed, data, data_bytes)
                SELECT access_group, path, head_version, head_created_time, head_deletion_time, head_destroyed, head_data,
                    head_data_bytes
                FROM kv_secrets WHERE head_version IS NOT NULL;
            ALTER TABLE kv_secrets DROP COLUMN head_version; ALTER TABLE kv_secrets DROP COLUMN head_created_time;
            ALTER TABLE kv_secrets DROP COLUMN head_deletion_time; ALTER TABLE kv_secrets DROP COLUMN head_destroyed;
            ALTER TABLE kv_secrets DROP COLUMN head_data; ALTER TABLE kv_secrets DROP COLUMN head_data_bytes;
            PRAGMA user_version = 10
            """)
        #expect(try sqlite(database, "SELECT group_concat(path || version, ',') FROM kv_versions") == "app1,app2,app3,other1")

        let upgraded = try KeychaindProcess(dataDir: server.dataDir)
        let files = try FileManager.default.contentsOfDirectory(atPath: server.dataDir.path)
        #expect(files.contains { $0.hasPrefix("keychain.db.pre-migration-v10-") }, "\(files)")
        #expect(try value(kv(upgraded, "GET", "data/app")) == "3")
        #expect(try value(kv(upgraded, "GET", "data/app?version=1")) == "1")
        #expect(try value(kv(upgraded, "GET", "data/other")) == "other")
        let metadata = try kv(upgraded, "GET", "metadata/app").json["data"] as? [String: Any]
        #expect(metadata?["current_version"] as? Int == 3)
        #expect((metadata?["versions"] as? [String: Any]).map { $0.keys.sorted() } == ["1", "2", "3"])
        let list = try kv(upgraded, "GET", "metadata/?list=true").json["data"] as? [String: Any]
        #expect(list?["keys"] as? [String] == ["app", "other"])
        #expect(try kv(upgraded, "DELETE", "data/app").status == 204)
        #expect(try kv(upgraded, "GET", "data/app").status == 404)
        #expect(try kv(upgraded, "POST", "undelete/app", ["versions": [3]]).status == 204)
        #expect(try value(kv(upgraded, "GET", "data/app")) == "3")

        let fourth = try kv(upgraded, "POST", "data/app", ["data": ["v": "4"]])
        #expect((fourth.json["data"] as? [String: Any])?["version"] as? Int == 4, "\(fourth.text)")
        #expect(try value(kv(upgraded, "GET", "data/app")) == "4")
        #expect(try value(kv(upgraded, "GET", "data/app?version=3")) == "3")
        #expect(upgraded.stop() == 0)
        #expect(try sqlite(database, "SELECT path || ':' || ifnull(head_version, '-') FROM kv_secrets ORDER BY path") == "app:4\nother:-")
        #expect(try sqlite(database, "SELECT group_concat(path || version, ',') FROM kv_versions") == "app1,app2,app3,other1")
    }

    /// A PostgreSQL database a later release migrated: a node exits 1 saying so, and the
    /// database's schema is left as it was.
    @Test func aPostgreSQLDatabaseALaterReleaseMigratedIsRefused() throws {
        let postgres = try ThrowawayPostgres.shared()
        let cluster = try PGCluster(postgres: postgres, nodes: 1)
        cluster.stopAll()
        try postgres.runClient(
            "psql", ["-d", cluster.database, "-v", "ON_ERROR_STOP=1", "-c",
                     "INSERT INTO schema_migrations (version) SELECT max(version) + 1 FROM schema_migrations"])
        let refused = try KeychaindProcess(dataDir: cluster.dataDirs[0], environment: cluster.environment, waitForListening: false)
        #expect(refused.waitForExit() == 1)
        let log = refused.log
        #expect(log.contains("the PostgreSQL database was migrated by a later keychaind release"), "\(log)")
        #expect(log.contains("pg_dump") && log.contains("Upgrade and roll back"), "\(log)")
    }

    /// Each node records its release, schema version and heartbeat in `cluster_nodes`, beats every
    /// few seconds, and exports the oldest release among live nodes (an older node's row, written
    /// by hand here, shows within a beat; a stale one does not) and its clock's difference with
    /// the database's.
    @Test func eachNodeRecordsItsReleaseAndAHeartbeat() throws {
        let postgres = try ThrowawayPostgres.shared()
        let cluster = try PGCluster(postgres: postgres, nodes: 2)
        defer { cluster.stopAll() }
        func psql(_ sql: String) throws -> String {
            let result = try Command.run([
                "psql", "-h", "127.0.0.1", "-p", "\(postgres.port)", "-U", postgres.user, "-d",
                cluster.database, "-AtX", "-v", "ON_ERROR_STOP=1", "-c", sql,
            ])
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let schema = try psql("SELECT max(version) FROM schema_migrations")
        let rows = try psql("SELECT release, schema_version FROM cluster_nodes ORDER BY node").split(separator: "\n")
        #expect(rows == ["\(KeychaindVersion.current)|\(schema)", "\(KeychaindVersion.current)|\(schema)"], "\(rows)")
        #expect(cluster.node(0).logShows("this node is recorded in cluster_nodes"), "\(cluster.node(0).log)")
        let first = try psql("SELECT heartbeat_at FROM cluster_nodes ORDER BY node")
        #expect(waitUntil(timeout: 12) { (try? psql("SELECT heartbeat_at FROM cluster_nodes ORDER BY node")) != first })

        _ = try psql(
            "INSERT INTO cluster_nodes VALUES ('old-host:/var/lib/keychaind', '0.0.9', 4, now(), now()), "
                + "('gone-host:/var/lib/keychaind', '0.0.1', 3, now() - interval '1 day', now() - interval '1 day')")
        let admin = cluster.adminToken
        var metrics = ""
        let shown = waitUntil(timeout: 12) {
            metrics = (try? cluster.client(1).send("GET", "/v1/metrics", token: admin).text) ?? ""
            return metrics.contains(#"keychaind_cluster_oldest_release{release="0.0.9"} 1"#)
        }
        #expect(shown, "\(metrics)")
        #expect(metrics.contains("keychaind_cluster_nodes 3"), "\(metrics)")
        let skew = metrics.split(separator: "\n").first { $0.hasPrefix("keychaind_cluster_clock_skew_seconds ") }
        #expect(skew.flatMap { Double($0.split(separator: " ")[1]) }.map { abs($0) < 2 } == true, "\(metrics)")
    }
}
