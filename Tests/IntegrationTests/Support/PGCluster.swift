import Foundation
import KeychainTestSupport
import Testing

/// Nodes of one keychaind vault on PostgreSQL (issue 31), each a real `keychaind serve` with a
/// data directory of its own on loopback: node 0 initialises a fresh database (or was
/// initialised by `keychaind init` in `firstDataDir`), the others join with a copy of its
/// `master.key`. Used from the test's thread only (writers reach nodes by port);
/// `stopAll()` stops every node by its PID.
final class PGCluster: @unchecked Sendable {
    let postgres: ThrowawayPostgres
    let database: String
    let environment: [String: String]
    private(set) var nodes: [KeychaindProcess] = []
    let dataDirs: [URL]

    /// A database of its own on `postgres`, and `count` nodes started over it.
    init(
        postgres: ThrowawayPostgres, nodes count: Int, database: String? = nil, firstDataDir: URL? = nil,
        environment extra: [String: String] = [:]
    ) throws {
        self.postgres = postgres
        if let database {
            self.database = database
        } else {
            self.database = try Self.newDatabase(on: postgres)
        }
        environment = Self.environment(url: Self.url(postgres, database: self.database), extra: extra)
        dataDirs = (0..<count).map { index in
            index == 0 && firstDataDir != nil
                ? firstDataDir! : KeychaindProcess.temporaryDirectory().appendingPathComponent("node\(index)")
        }
        do {
            nodes.append(try KeychaindProcess(dataDir: dataDirs[0], environment: environment))
            for index in 1..<count {
                try Self.copyMasterKey(from: dataDirs[0], to: dataDirs[index])
                nodes.append(try KeychaindProcess(dataDir: dataDirs[index], environment: environment))
            }
        } catch {
            stopAll()
            throw error
        }
    }

    /// A connection string for `database` that sets no timeout, so that the nodes' own
    /// `storage.postgresql.*Timeout*` settings apply (the string's keywords would win).
    static func url(_ postgres: ThrowawayPostgres, database: String) -> String {
        "host=127.0.0.1 port=\(postgres.port) user=\(postgres.user) dbname=\(database)"
    }

    /// The environment of a node on `url` (`storage.*` through KEYCHAIND_ variables).
    static func environment(url: String, extra: [String: String] = [:]) -> [String: String] {
        var environment = [
            "KEYCHAIND_STORAGE_BACKEND": "postgresql",
            "KEYCHAIND_STORAGE_POSTGRESQL_URL": url,
            "KEYCHAIND_LOG_LEVEL": "notice",
        ]
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// A fresh, empty database on `postgres`; its name.
    static func newDatabase(on postgres: ThrowawayPostgres) throws -> String {
        let name = "kc_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        try postgres.createDatabase(name)
        return name
    }

    /// Copies `from`'s master.key into `to` (made when missing), mode 0600.
    static func copyMasterKey(from: URL, to: URL) throws {
        try FileManager.default.createDirectory(at: to, withIntermediateDirectories: true)
        let target = to.appendingPathComponent("master.key")
        try? FileManager.default.removeItem(at: target)
        try FileManager.default.copyItem(at: from.appendingPathComponent("master.key"), to: target)
        guard chmod(target.path, 0o600) == 0 else { throw ProcessFailure(description: "chmod \(target.path)") }
    }

    var adminToken: String { (try? nodes[0].adminToken()) ?? "" }

    /// A new client made through node `index` with the first node's admin token; its token.
    func newClientToken(_ name: String, groups: [String], on index: Int = 0) throws -> String {
        let answer = try client(index).json("POST", "/v1/admin/clients", ["name": name, "accessGroups": groups], token: adminToken)
        guard answer.status == 201, let token = answer.json["token"] as? String else {
            throw ProcessFailure(description: "cannot create client \(name) on node \(index): \(answer.status) \(answer.text)")
        }
        return token
    }

    func node(_ index: Int) -> KeychaindProcess { nodes[index] }
    func client(_ index: Int) -> HTTPTestClient { nodes[index].client() }

    /// Starts node `index` again over its data directory (after a stop or a kill).
    func restart(_ index: Int) throws {
        nodes[index].stop()
        nodes[index] = try KeychaindProcess(dataDir: dataDirs[index], environment: environment)
    }

    /// Stops every node (SIGTERM by PID, SIGKILL when it does not exit).
    func stopAll() {
        for node in nodes { node.stop() }
    }

    deinit { stopAll() }
}

/// What the cluster tests ask of a node, over the HTTP test client.
extension HTTPTestClient {
    /// `GET /v1/health`: its HTTP status and answer.
    func health() -> (status: Int, json: [String: Any]) {
        guard let answer = try? send("GET", "/v1/health") else { return (0, [:]) }
        return (answer.status, answer.json)
    }

    /// `POST /v1/items/genericPassword` of one account in `service`; the HTTP status.
    func add(service: String, account: String, value: String, token: String) throws -> Int {
        try json("POST", "/v1/items/genericPassword", ["service": service, "account": account, "value": value], token: token)
            .status
    }

    /// The value of `service`/`account`, nil when there is none (404); throws on anything else.
    func value(service: String, account: String, token: String) throws -> String? {
        let answer = try send(
            "GET", "/v1/items/genericPassword?service=\(service)&account=\(account)&return=data", token: token)
        if answer.status == 404 { return nil }
        guard answer.status == 200, let item = answer.json["item"] as? [String: Any] else {
            throw ProcessFailure(description: "GET \(service)/\(account): \(answer.status) \(answer.text)")
        }
        return item["value"] as? String
    }

    /// Every item of `service`, account to value, page after page (bounded).
    func values(service: String, token: String) throws -> [String: String] {
        var stored: [String: String] = [:]
        var cursor: String?
        for _ in 0..<1000 {
            let page = cursor.map { "&cursor=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)" } ?? ""
            let answer = try send(
                "GET", "/v1/items/genericPassword?service=\(service)&limit=all&return=attributes,data\(page)", token: token)
            if answer.status == 404 { return stored }
            guard answer.status == 200, let items = answer.json["items"] as? [[String: Any]] else {
                throw ProcessFailure(description: "listing \(service): \(answer.status) \(answer.text)")
            }
            for item in items {
                if let account = item["account"] as? String { stored[account] = item["value"] as? String }
            }
            cursor = answer.json["next"] as? String
            if cursor == nil { return stored }
        }
        throw ProcessFailure(description: "listing \(service): more than 1000 pages")
    }
}

/// Seconds on the monotonic clock since `start`.
func secondsSince(_ start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// A line of figures on standard error, as the hardening tests print theirs.
func clusterReport(_ line: String) {
    FileHandle.standardError.write(Data("cluster: \(line)\n".utf8))
}
