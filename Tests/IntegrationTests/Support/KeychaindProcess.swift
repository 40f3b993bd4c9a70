import Foundation
import Testing

/// A real `keychaind` binary run by a test: its own temporary data directory, an ephemeral
/// loopback port read from its log, stopped (SIGTERM) by `stop()` (SIGKILL on deinit if still
/// running); its directory is removed with the test run's scratch root at exit.
final class KeychaindProcess: @unchecked Sendable {
    // @unchecked: the mutable log buffer is only touched under `lock`.
    let process = Process()
    let dataDir: URL
    private(set) var port: UInt16 = 0
    private let lock = NSLock()
    private var logText = ""

    /// The keychaind executable built next to this test bundle.
    static var executable: URL {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // On Linux the tests run from `<build>/debug/keychaindPackageTests.xctest`; on macOS from
        // inside a bundle, several levels down.
        for _ in 0..<4 where !FileManager.default.fileExists(atPath: directory.appendingPathComponent("keychaind").path) {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent("keychaind")
    }

    /// A fresh directory inside this test run's scratch root, which goes when the run exits (so
    /// do the data directories, keys and logs the servers wrote in it).
    static func temporaryDirectory() -> URL {
        let url = scratchRoot.appendingPathComponent(UUID().uuidString)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// One directory per test process for every test's files, removed at exit: tests hand
    /// these directories to servers and to each other, so no single owner could remove one.
    private static let scratchRoot: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("keychaind-test-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: KeychaindProcess.scratchRoot) }
        return url
    }()

    /// Starts `keychaind serve` (or other `arguments`) and, when `waitForListening`, waits until it logs its port.
    init(
        dataDir: URL? = nil, arguments: [String]? = nil, environment: [String: String] = [:],
        waitForListening: Bool = true
    ) throws {
        self.dataDir = dataDir ?? Self.temporaryDirectory().appendingPathComponent("data")
        process.executableURL = Self.executable
        process.arguments = arguments ?? ["serve", "--listen", "127.0.0.1:0", "--data-dir", self.dataDir.path]
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("KEYCHAIND_") }
        env["KEYCHAIND_LOG_LEVEL"] = env["KEYCHAIND_LOG_LEVEL"] ?? "info"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.withLock { self.logText += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
        if waitForListening { try waitForPort() }
    }

    var log: String { lock.withLock { logText } }

    /// Whether the log shows `text` within `timeout` seconds: the server writes a line before it
    /// answers, but the pipe is read by another thread of this process, which may lag behind.
    func logShows(_ text: String, timeout: TimeInterval = 5) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !log.contains(text), Date() < deadline { usleep(10_000) }
        return log.contains(text)
    }

    private func waitForPort() throws {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let range = log.range(of: #"listening on https?://127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                let match = log[range]
                port = UInt16(match.split(separator: ":").last!)!
                return
            }
            if !process.isRunning { throw ProcessFailure(description: "keychaind exited early:\n\(log)") }
            usleep(20_000)
        }
        throw ProcessFailure(description: "keychaind did not start listening:\n\(log)")
    }

    /// Waits for the process to exit (bounded) and returns its status.
    @discardableResult
    func waitForExit(timeout: TimeInterval = 20) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { return nil }
        usleep(50_000)  // let the last log lines arrive
        return process.terminationStatus
    }

    func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// SIGTERM, wait for exit; returns the exit status.
    @discardableResult
    func stop() -> Int32? {
        if process.isRunning { signal(SIGTERM) }
        let status = waitForExit()
        if status == nil {
            signal(SIGKILL)
            _ = waitForExit()
        }
        return status
    }

    /// The admin token written by initialisation.
    func adminToken() throws -> String {
        try String(contentsOf: dataDir.appendingPathComponent("admin.token"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func client() -> HTTPTestClient { HTTPTestClient(port: port) }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
    }
}

struct ProcessFailure: Error, CustomStringConvertible {
    let description: String
}
