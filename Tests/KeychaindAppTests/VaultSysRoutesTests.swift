import Foundation
import KeychainAPI
import KeychainConfig
import KeychainCore
import KeychaindTesting
import KeychainHTTP
import Testing

/// Vault's `sys/` routes and `lookup-self` in the shapes OpenBao 2.7.2 answers (fields pinned
/// from its answers; `scripts/vault-compare` compares the two servers call by call).
struct VaultSysRoutesTests {
    static let healthFields = [
        "initialized", "sealed", "standby", "replication_performance_mode", "replication_dr_mode", "server_time_utc",
        "version", "cluster_name", "cluster_id",
    ]
    static let sealStatusFields = [
        "type", "initialized", "sealed", "t", "n", "progress", "nonce", "recovery_seal", "version", "commit_date", "migration",
        "cluster_name", "cluster_id", "storage_type",
    ]
    static let envelopeFields = ["request_id", "lease_id", "renewable", "lease_duration", "data", "wrap_info", "warnings", "auth"]

    static func keys(_ value: JSONValue?) -> [String] {
        guard case .object(let members)? = value else { return [] }
        return members.map(\.0)
    }

    /// A client of groups `team`, `sys` (no mount: a reserved name) and `other`, and its token.
    static func client(_ app: TestApp, groups: [String] = ["team", "sys", "other"]) throws -> String {
        let list = groups.map { "\"\($0)\"" }.joined(separator: ",")
        let made = try app.send(.post, "/v1/admin/clients", token: app.adminToken, body: #"{"name":"app","accessGroups":[\#(list)]}"#)
        return try #require(made.json["token"]?.stringValue)
    }

    @Test func healthAnswersVaultsFieldsWhenActive() throws {
        let app = try TestApp()
        defer { app.stop() }
        let health = try app.send(.get, "/v1/sys/health")
        #expect(health.status == 200 && Self.keys(health.json) == Self.healthFields)
        #expect(health.json["sealed"] == .bool(false) && health.json["standby"] == .bool(false))
        #expect(health.json["replication_dr_mode"] == .string("disabled"))
        #expect(health.json["version"] == .string(KeychaindVersion.current))
        // Made at initialisation, kept: the same in every answer.
        let clusterID = try #require(health.json["cluster_id"]?.stringValue)
        #expect(UUID(uuidString: clusterID) != nil)
        #expect(try app.send(.get, "/v1/sys/seal-status").json["cluster_id"] == .string(clusterID))
        #expect(health.header("cache-control") == "no-store" && health.header("content-type") == "application/json")
        guard case .integer(let time)? = health.json["server_time_utc"] else { Issue.record("no server_time_utc"); return }
        #expect(abs(Double(time) - Date().timeIntervalSince1970) < 60)
        #expect(try app.send(.head, "/v1/sys/health").status == 200)
    }

    @Test(arguments: [
        ("activecode=299", 299), ("activecode=%2B201", 201), ("standbyok=true&activecode=202", 202),
        ("perfstandbyok=x", 200), ("drsecondarycode=x", 200), ("performancestandbycode=x", 200), ("sealedcode=299", 200),
        ("activecode=201&activecode=x", 201), ("activecode=abc", 400), ("activecode=", 400), ("standbyok=yes", 400),
        ("sealedcode=x", 400), ("standbycode=x", 400), ("uninitcode=x", 400), ("activecode=99", 400),
        ("activecode=1000", 400),
    ])
    func healthOverrides(_ query: String, _ status: Int) throws {
        let app = try TestApp()
        defer { app.stop() }
        let health = try app.send(.get, "/v1/sys/health?\(query)")
        #expect(health.status == status)
        if status == 400 { #expect(health.text == #"{"errors":[]}"#) }
    }

    @Test func aNoContentCodeHasNoBody() throws {
        let app = try TestApp(.live)
        defer { app.stop() }
        let health = try app.send(.get, "/v1/sys/health?activecode=204")
        #expect(health.status == 204 && health.body.isEmpty)
        let head = try app.send(.head, "/v1/sys/health")
        #expect(head.status == 200 && head.body.isEmpty)
    }

    @Test func aLockedVaultIsSealed() throws {
        let app = try TestApp()
        defer { app.stop() }
        let token = try Self.client(app)
        #expect(try app.send(.post, "/v1/admin/lock", token: app.adminToken).status == 200)
        let health = try app.send(.get, "/v1/sys/health")
        #expect(health.status == 503 && health.json["sealed"] == .bool(true) && health.json["standby"] == .bool(true))
        #expect(Self.keys(health.json) == Self.healthFields.filter { !$0.hasPrefix("cluster_") })
        #expect(health.json["replication_performance_mode"] == .string("unknown"))
        #expect(try app.send(.get, "/v1/sys/health?sealedcode=200").status == 200)
        #expect(try app.send(.get, "/v1/sys/health?sealedcode=200&activecode=x").status == 400)
        let status = try app.send(.get, "/v1/sys/seal-status")
        #expect(status.status == 200 && status.json["sealed"] == .bool(true))
        #expect(Self.keys(status.json) == Self.sealStatusFields.filter { !$0.hasPrefix("cluster_") })
        let mount = try app.send(.get, "/v1/sys/internal/ui/mounts/team", headers: [("X-Vault-Token", token)])
        #expect(mount.status == 503 && mount.text == #"{"errors":["Vault is sealed"]}"#)
        #expect(try app.send(.post, "/v1/admin/unlock", token: app.adminToken).status == 200)
        #expect(try app.send(.get, "/v1/sys/health").status == 200)
    }

    @Test func sealStatusAndLeaderAreEnoughForBaoStatus() throws {
        let app = try TestApp()
        defer { app.stop() }
        let status = try app.send(.get, "/v1/sys/seal-status")
        #expect(status.status == 200 && Self.keys(status.json) == Self.sealStatusFields)
        #expect(status.json["type"] == .string("shamir") && status.json["t"] == .integer(1) && status.json["n"] == .integer(1))
        #expect(status.json["storage_type"] == .string("sqlite") && status.json["sealed"] == .bool(false))
        let leader = try app.send(.get, "/v1/sys/leader")
        #expect(leader.status == 200 && leader.text == #"{"ha_enabled":false}"#)
    }

    @Test func theMountsOfTheCallersOwnGroupsAreKVVersion2() throws {
        let app = try TestApp()
        defer { app.stop() }
        let token = try Self.client(app)
        for path in ["/v1/sys/internal/ui/mounts/team", "/v1/sys/internal/ui/mounts/team/db/password", "/v1/sys/mounts-all/team/x"] {
            let mount = try app.send(.get, path, headers: [("X-Vault-Token", token)])
            #expect(mount.status == 200 && Self.keys(mount.json) == Self.envelopeFields)
            let data = mount.json["data"]
            #expect(Self.keys(data) == [
                "accessor", "config", "deprecation_status", "description", "external_entropy_access", "local", "options",
                "path", "plugin_version", "running_plugin_version", "running_sha256", "seal_wrap", "type", "uuid",
            ])
            #expect(data?["path"] == .string("team/") && data?["type"] == .string("kv"))
            #expect(data?["options"]?["version"] == .string("2"))
            #expect(data?["accessor"]?.stringValue?.hasPrefix("kv_") == true)
        }
        // The same mount, the same accessor; another group, another.
        let first = try app.send(.get, "/v1/sys/internal/ui/mounts/team", token: token).json["data"]?["accessor"]
        let again = try app.send(.get, "/v1/sys/internal/ui/mounts/team/a", token: token).json["data"]?["accessor"]
        let other = try app.send(.get, "/v1/sys/internal/ui/mounts/other", token: token).json["data"]?["accessor"]
        #expect(first == again && first != other)
    }

    @Test(arguments: ["sys", "nobody", "secret", "admin", ""])
    func anyOtherMountIsPermissionDenied(_ group: String) throws {
        let app = try TestApp()
        defer { app.stop() }
        let token = try Self.client(app)
        // `admin` exists (the admin's group) and is no mount; `nobody` does not exist: the same
        // answer, OpenBao's to a valid token (the path named with one trailing slash).
        let mount = try app.send(.get, "/v1/sys/internal/ui/mounts/\(group)/app", headers: [("X-Vault-Token", token)])
        #expect(mount.status == 403)
        #expect(
            mount.text
                == #"{"errors":["preflight capability check returned 403, please ensure client's policies grant access to path \"\#(group)/app/\""]}"#)
    }

    @Test func withoutATokenMountsArePermissionDenied() throws {
        let app = try TestApp()
        defer { app.stop() }
        let mount = try app.send(.get, "/v1/sys/internal/ui/mounts/team")
        #expect(mount.status == 403 && mount.text == #"{"errors":["permission denied"]}"#)
        #expect(!mount.headers.contains { $0.name.lowercased() == "www-authenticate" })
    }

    @Test func theSecretAliasIsTheCallersFirstGroup() throws {
        let app = try TestApp { $0.vaultSecretMountAlias = true }
        defer { app.stop() }
        let token = try Self.client(app)
        let mount = try app.send(.get, "/v1/sys/internal/ui/mounts/secret/db", headers: [("X-Vault-Token", token)])
        #expect(mount.status == 200 && mount.json["data"]?["path"] == .string("secret/"))
        let team = try app.send(.get, "/v1/sys/internal/ui/mounts/team", headers: [("X-Vault-Token", token)])
        #expect(mount.json["data"]?["accessor"] == team.json["data"]?["accessor"])
        // A first group that is no mount is not reached through the alias.
        let sysFirst = try app.send(.post, "/v1/admin/clients", token: app.adminToken, body: #"{"name":"b","accessGroups":["sys","x"]}"#)
        let other = try #require(sysFirst.json["token"]?.stringValue)
        #expect(try app.send(.get, "/v1/sys/internal/ui/mounts/secret", headers: [("X-Vault-Token", other)]).status == 403)
    }

    @Test func lookupSelfAnswersOpenBaosFields() throws {
        let app = try TestApp()
        defer { app.stop() }
        let token = try Self.client(app)
        let answer = try app.send(.get, "/v1/auth/token/lookup-self", headers: [("X-Vault-Token", token)])
        #expect(answer.status == 200)
        for field in Self.envelopeFields { #expect(answer.json[field] != nil, "\(field)") }
        for field in ["status", "name", "accessGroups", "accessor", "ttl", "renewable"] { #expect(answer.json[field] != nil, "\(field)") }
        let data = answer.json["data"]
        #expect(Self.keys(data) == [
            "accessor", "creation_time", "creation_ttl", "display_name", "entity_id", "expire_time", "explicit_max_ttl", "id",
            "issue_time", "meta", "num_uses", "orphan", "path", "policies", "renewable", "ttl", "type",
        ])
        #expect(data?["id"] == .string(token) && data?["meta"] == .null && data?["expire_time"] == .null)
        #expect(data?["ttl"] == .integer(0) && data?["type"] == .string("service") && data?["entity_id"] == .string(""))
        #expect(data?["policies"] == .array([.string("team"), .string("sys"), .string("other")]))
        #expect(answer.json["auth"] == .null && answer.json["wrap_info"] == .null && answer.json["lease_id"] == .string(""))
        // The same token as a bearer: the same answer.
        let bearer = try app.send(.get, "/v1/auth/token/lookup-self", token: token)
        #expect(bearer.json["data"]?["id"] == .string(token))
    }

    /// A token that expires, as OpenBao answers its lookups and renewals to `X-Vault-Token`: the
    /// envelope's `renewable` false (the token's is in `data` and `auth`), `auth.lease_duration`
    /// the TTL granted, `last_renewal` and `last_renewal_time` once renewed.
    @Test func renewSelfAndLookupSelfAnswerOpenBaosLeaseFields() throws {
        let app = try TestApp()
        defer { app.stop() }
        let made = try app.send(
            .post, "/v1/admin/clients", token: app.adminToken, body: #"{"name":"app","accessGroups":["team"],"ttl":3600,"maxTtl":7200}"#)
        let token = try #require(made.json["token"]?.stringValue)
        let vault = [(name: "X-Vault-Token", value: token)]
        let lookup = try app.send(.get, "/v1/auth/token/lookup-self", headers: vault)
        #expect(lookup.json["renewable"] == .bool(false) && lookup.json["lease_duration"] == .integer(0))
        #expect(!Self.keys(lookup.json["data"]).contains("last_renewal"))

        let renewed = try app.send(.post, "/v1/auth/token/renew-self", body: #"{"increment":"90m"}"#, headers: vault)
        #expect(renewed.status == 200 && renewed.json["renewable"] == .bool(false) && renewed.json["lease_duration"] == .integer(0))
        #expect(renewed.json["auth"]?["lease_duration"] == .integer(5400) && renewed.json["auth"]?["renewable"] == .bool(true))

        let after = try app.send(.get, "/v1/auth/token/lookup-self", headers: vault)
        #expect(after.json["renewable"] == .bool(false))
        let data = after.json["data"]
        #expect(Self.keys(data) == [
            "accessor", "creation_time", "creation_ttl", "display_name", "entity_id", "expire_time", "explicit_max_ttl", "id",
            "issue_time", "last_renewal", "last_renewal_time", "meta", "num_uses", "orphan", "path", "policies", "renewable", "ttl",
            "type",
        ])
        #expect(data?["creation_ttl"] == .integer(3600) && data?["explicit_max_ttl"] == .integer(7200) && data?["renewable"] == .bool(true))
        #expect(data?["last_renewal"]?.stringValue.flatMap(RFC3339.parse) != nil)
    }
}
