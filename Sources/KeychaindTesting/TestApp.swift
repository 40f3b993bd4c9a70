public import Foundation
public import KeychainAPI
public import KeychainConfig
public import KeychainCore
public import KeychaindApp
public import KeychainHTTP
import KeychainStore
public import Logging
import Synchronization

/// keychaind's real app, served for a test (as Hummingbird's `Application.test` does): the
/// wiring `keychaind serve` runs (`KeychaindApp`), over a data directory of its own in a fresh
/// temporary directory (SQLite unless `configure` says otherwise), either in process, each
/// request going straight into the `KeychainApplication` responder, or on a loopback port through
/// libmicrohttpd (`.live`). `stop()` (or the last reference's end) stops it and removes the
/// temporary directory.
///
/// The binary is spawned only by tests that check the process itself (signals, exit status,
/// start-up refusals, the command line): everything else is this app.
public final class TestApp: Sendable {
    public enum Transport: Sendable {
        /// Requests go straight into `respond(to:)`: no socket, no thread of libmicrohttpd's.
        case inProcess
        /// `KeychaindApp.start()`: libmicrohttpd on 127.0.0.1 at an ephemeral port, and the
        /// background refresher; `send` goes over a loopback connection.
        case live
    }

    public let app: KeychaindApp
    public let transport: Transport
    /// The temporary directory this app owns (removed by `stop`); the data directory is `data` in it.
    public let root: URL
    /// The first admin token, as initialisation wrote it to `admin.token`.
    public let adminToken: String
    /// The port listened on (`.live`), else nil.
    public let port: UInt16?
    private let stopped = Mutex(false)

    public var configuration: ServerConfiguration { app.configuration }
    /// The vault's item store, for a test that checks what is stored beside what is answered.
    public var items: any ItemStore { app.vault.items }
    public var providers: any ProviderStore { app.vault.providers }
    public var dataDirectory: URL { root.appendingPathComponent("data") }

    /// An app over a new data directory. The configuration is `serve`'s, loaded from `environment`
    /// (`KEYCHAIND_*` variables, as the binary reads them; not this process's environment) with
    /// `dataDir` the temporary data directory and `listen` `127.0.0.1:0`; `configure` may change
    /// anything in it before it is served.
    public init(
        _ transport: Transport = .inProcess, environment: [String: String] = [:], logger: Logger = TestApp.noLog,
        configure: (inout ServerConfiguration) throws -> Void = { _ in }
    ) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("keychaind-testapp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let cleanUp = { [root] in try? FileManager.default.removeItem(at: root) }
        do {
            var configuration = try ConfigurationLoader.load(
                filePath: nil, environment: environment,
                flags: ["dataDir": root.appendingPathComponent("data").path, "listen": "127.0.0.1:0"])
            try configure(&configuration)
            let directory = DataDirectory(path: configuration.dataDir)
            let opened = try KeychaindApp.openVault(directory, configuration: configuration, logger: logger)
            let app: KeychaindApp
            do {
                app = try KeychaindApp(
                    vault: opened.vault, backups: opened.backups, configuration: configuration, logger: logger)
            } catch {
                opened.backups?.stop()
                opened.vault.close()
                throw error
            }
            self.app = app
            self.transport = transport
            do {
                adminToken = try String(contentsOfFile: directory.adminTokenPath, encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                port = transport == .live ? try app.start() : nil
            } catch {
                app.stop()
                throw error
            }
        } catch {
            cleanUp()
            throw error
        }
    }

    deinit { stop() }

    /// A logger that writes nothing.
    public static let noLog = Logger(label: "keychaind-test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Stops the app (server, background refresher, audit log, vault) and removes its directory.
    /// Idempotent.
    public func stop() {
        guard !stopped.withLock({ stopped in defer { stopped = true }; return stopped }) else { return }
        app.stop()
        try? FileManager.default.removeItem(at: root)
    }

    /// The responder itself, for tests that call `respond(toHead:)` or build their own requests.
    public var application: KeychainApplication { app.application }

    /// `target` (path, then `?query` as sent) with `token` as its bearer, `body` as JSON: through
    /// the responder in process, or over a loopback connection to the live server.
    @discardableResult
    public func send(
        _ method: HTTPMethod, _ target: String, token: String? = nil, body: String? = nil,
        headers: [(name: String, value: String)] = []
    ) throws -> TestResponse {
        guard let port else { return respond(method, target, token: token, body: body, headers: headers) }
        var all = headers
        if let token { all.append(("Authorization", "Bearer \(token)")) }
        if body != nil, !all.contains(where: { $0.name.lowercased() == "content-type" }) {
            all.append(("Content-Type", "application/json"))
        }
        return try LoopbackHTTP.send(method.rawValue, target, headers: all, body: body.map { Array($0.utf8) }, port: port)
    }

    /// As `send`, always in process (also when the app is `.live`, for a test that has a client
    /// library on the port and checks the answers themselves straight from the responder).
    public func respond(
        _ method: HTTPMethod, _ target: String, token: String? = nil, body: String? = nil,
        headers: [(name: String, value: String)] = []
    ) -> TestResponse {
        var all = headers
        if let token { all.append(("Authorization", "Bearer \(token)")) }
        if body != nil, !all.contains(where: { $0.name.lowercased() == "content-type" }) {
            all.append(("Content-Type", "application/json"))
        }
        let request = Self.request(method, target, headers: all, body: Array((body ?? "").utf8))
        let response = app.application.respond(to: request)
        return TestResponse(status: response.status, headers: response.headers, body: response.body)
    }

    /// The request libmicrohttpd would hand over for `target`: the path as sent, the query split
    /// at `&` and `=` and percent-decoded (`+` as a space, as libmicrohttpd does), from 127.0.0.1.
    public static func request(
        _ method: HTTPMethod, _ target: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
        remoteAddress: String = "127.0.0.1"
    ) -> HTTPRequest {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [HTTPRequest.QueryItem] = []
        if parts.count > 1 {
            for pair in parts[1].split(separator: "&") {
                let nameValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let decode = { (text: Substring) in
                    let spaced = text.replacingOccurrences(of: "+", with: " ")
                    return spaced.removingPercentEncoding ?? spaced
                }
                query.append(.init(name: decode(nameValue[0]), value: nameValue.count > 1 ? decode(nameValue[1]) : ""))
            }
        }
        return HTTPRequest(
            method: method, path: String(parts[0]), queryItems: query, headers: headers, body: body,
            remoteAddress: remoteAddress)
    }
}

/// An answer as a test reads it: status, headers (names as sent), body, and the body as JSON.
public struct TestResponse: Sendable {
    public let status: Int
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body parsed as JSON; `.null` when it is not JSON.
    public var json: JSONValue { (try? JSONValue.parse(body)) ?? .null }
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The first value of a header, by case-insensitive name.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The value of an unlabelled sample `name` in a Prometheus text answer (`/v1/metrics`).
    public func sample(_ name: String) -> Double? {
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }
    }
}
