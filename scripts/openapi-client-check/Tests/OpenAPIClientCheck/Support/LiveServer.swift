import Foundation
import OpenAPIRuntime
import OpenAPIURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real keychaind binary, served for one test: its own temporary data directory (which
/// `serve` initialises), an ephemeral loopback port read from its log, stopped by its PID.
/// The binary is $KEYCHAIND_BINARY, or the main package's `.build/debug/keychaind`.
final class LiveServer: @unchecked Sendable {
    // @unchecked: the log text is only touched under `lock`.
    private let process = Process()
    private let directory: URL
    /// The data directory `serve` initialised (master.key, admin.token, the database).
    let dataDirectory: URL
    private let lock = NSLock()
    private var logText = ""
    private(set) var baseURL = URL(string: "http://127.0.0.1")!
    /// The first admin client's token, which `serve` wrote into the new data directory.
    private(set) var adminToken = ""

    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["KEYCHAIND_BINARY"] { return URL(fileURLWithPath: path) }
        // This file is scripts/openapi-client-check/Tests/OpenAPIClientCheck/Support/LiveServer.swift.
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<6 { root.deleteLastPathComponent() }
        return root.appendingPathComponent(".build/debug/keychaind")
    }

    /// Starts `keychaind serve` with `settings` (`KEYCHAIND_*` variables; none come from outside).
    init(settings: [String: String] = [:]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("openapi-client-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        dataDirectory = directory.appendingPathComponent("data")
        process.executableURL = Self.binary
        process.arguments = ["serve", "--listen", "127.0.0.1:0", "--data-dir", dataDirectory.path]
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("KEYCHAIND_") }
        environment["KEYCHAIND_LOG_LEVEL"] = "info"
        environment.merge(settings) { $1 }
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.withLock { self.logText += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
        do {
            let port = try waitForPort()
            baseURL = URL(string: "http://127.0.0.1:\(port)")!
            adminToken = try String(contentsOf: dataDirectory.appendingPathComponent("admin.token"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            stop()
            throw error
        }
    }

    var log: String { lock.withLock { logText } }

    /// A generated client calling this server with `token` (none: no Authorization header).
    func client(token: String?) -> Client {
        Client(
            serverURL: baseURL,
            // keychaind's dates carry milliseconds (DateAnswer).
            configuration: Configuration(dateTranscoder: .iso8601WithFractionalSeconds),
            transport: URLSessionTransport(configuration: .init(session: Self.session)),
            middlewares: token.map { [BearerToken(token: $0)] } ?? [])
    }

    /// The admin client of this server.
    var admin: Client { client(token: adminToken) }

    /// One session for every client: each of its connections goes to loopback only.
    private static let session = URLSession(configuration: .ephemeral)

    private func waitForPort() throws -> Int {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let range = log.range(of: #"listening on http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression),
                let port = Int(log[range].split(separator: ":").last ?? "")
            {
                return port
            }
            guard process.isRunning else { throw ServerFailure(description: "keychaind exited before listening:\n\(log)") }
            usleep(20_000)
        }
        throw ServerFailure(description: "keychaind did not listen within 20 s:\n\(log)")
    }

    /// SIGTERM by PID and a bounded wait (SIGKILL after it); the data directory goes too.
    func stop() {
        let pid = process.processIdentifier
        if process.isRunning { kill(pid, SIGTERM) }
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

struct ServerFailure: Error, CustomStringConvertible {
    let description: String
}
