import Foundation
import KeychaindTesting
import Testing

/// The Authlib token endpoint of `oauth_server.py` (a real OAuth 2.0 authorization server),
/// started on loopback for one test and stopped by its PID. Run with Debian's python3, which
/// has Authlib and Flask (`scripts/bootstrap --test`).
final class OAuthServer {
    static let basicClient = (id: "basic-client", secret: "s3cret-basic")
    static let postClient = (id: "post-client", secret: "s3cret-post")

    let process = Process()
    private(set) var port = 0
    /// The CA certificate the HTTPS server's certificate is verified with; nil for plain HTTP.
    let caFile: String?

    /// `tls`: a certificate and key for 127.0.0.1 (its own CA), else plain HTTP.
    init(tls: (cert: String, key: String)? = nil) throws {
        caFile = tls?.cert
        port = try LoopbackPythonServer.start(
            process, script: "oauth_server.py", arguments: tls.map { ["--cert", $0.cert, "--key", $0.key] } ?? [])
    }

    var tokenEndpoint: String { "\(caFile == nil ? "http" : "https")://127.0.0.1:\(port)/token" }

    /// SIGTERM, then SIGKILL if it is still running after 5 seconds.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        if !waitUntil(timeout: 5, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }

    // MARK: - The control API

    /// How /token answers from now on: `normal`, `slow` (after `delay` seconds), `error` (503),
    /// `invalid_grant`; and the `expires_in` of the tokens it issues.
    func control(mode: String = "normal", delay: Double = 0, expiresIn: Int = 3600) throws {
        _ = try call("POST", "/control", ["mode": mode, "delay": delay, "expiresIn": expiresIn])
    }

    /// A hostile provider: /token answers `body` with HTTP `status` from now on, whatever it is asked.
    func answer(status: Int, body: [String: Any]) throws {
        _ = try call("POST", "/control", ["mode": "answer", "status": status, "body": body])
    }

    /// A token pair issued to `clientId` as an authorization would.
    func seed(clientId: String) throws -> (accessToken: String, refreshToken: String) {
        let answer = try call("POST", "/seed", ["clientId": clientId])
        return (try string(answer, "access_token"), try string(answer, "refresh_token"))
    }

    struct Stats {
        /// Calls to /token.
        var calls: Int
        /// Every refresh token presented, in order.
        var presented: [String]
        var authMethods: [String]
        /// Every access token issued, in order.
        var issued: [String]
        /// The most /token calls ever answered at once.
        var maxInFlight: Int
    }

    func stats() throws -> Stats {
        let answer = try call("GET", "/stats", nil)
        return Stats(
            calls: answer["calls"] as? Int ?? -1, presented: answer["presented"] as? [String] ?? [],
            authMethods: answer["authMethods"] as? [String] ?? [], issued: answer["issued"] as? [String] ?? [],
            maxInFlight: answer["maxInFlight"] as? Int ?? -1)
    }

    /// An expiry long past: tokens stored with it are due at once.
    static let expired = "2020-01-01T00:00:00Z"

    /// Stores a seeded token pair for `service` on `keychaind` (none for `client_credentials`),
    /// expiring at `expiresAt`, and a refresh setting for it against this server, as its admin.
    func register(
        _ service: String, on keychaind: any LoopbackKeychaind, expiresAt: String = OAuthServer.expired,
        grant: String = "refresh_token", clientAuth: String = "basic", refreshBefore: Int = 60
    ) throws -> (accessToken: String, refreshToken: String) {
        let http = keychaind.client()
        let admin = try keychaind.adminToken()
        let client = clientAuth == "basic" ? Self.basicClient : Self.postClient
        let seeded = try seed(clientId: client.id)
        if grant == "refresh_token" {
            let put = try http.json(
                "PUT", "/v1/tokens/\(service)",
                ["accessToken": seeded.accessToken, "refreshToken": seeded.refreshToken, "expiresAt": expiresAt],
                token: admin)
            #expect(put.status == 200)
        }
        let setting = try http.json(
            "PUT", "/v1/tokens/\(service)/refresh",
            [
                "tokenEndpoint": tokenEndpoint, "grant": grant, "clientId": client.id, "clientSecret": client.secret,
                "clientAuth": clientAuth, "refreshBefore": refreshBefore,
            ], token: admin)
        #expect(setting.status == 200, "\(setting.text)")
        #expect(setting.json["clientSecret"] == nil)
        #expect(!setting.text.contains(client.secret))
        return seeded
    }

    func call(_ method: String, _ path: String, _ body: [String: Any]?) throws -> [String: Any] {
        var arguments = ["curl", "-sS", "--max-time", "10", "-X", method]
        if let caFile { arguments += ["--cacert", caFile] }
        if let body {
            let json = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
            arguments += ["-H", "Content-Type: application/json", "--data", json]
        }
        arguments.append("\(caFile == nil ? "http" : "https")://127.0.0.1:\(port)\(path)")
        let result = try Command.run(arguments)
        guard result.status == 0,
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        else { throw ProcessFailure(description: "oauth_server \(path): \(result.stderr) \(result.stdout)") }
        return object
    }

    private func string(_ object: [String: Any], _ key: String) throws -> String {
        guard let value = object[key] as? String else { throw ProcessFailure(description: "oauth_server: no \(key)") }
        return value
    }
}
