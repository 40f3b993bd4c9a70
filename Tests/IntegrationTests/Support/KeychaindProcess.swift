import Foundation
import KeychaindTesting
import Testing

/// A real `keychaind` binary run by a test: its own temporary data directory, an ephemeral
/// loopback port read from its log, stopped (SIGTERM) by `stop()` (SIGKILL on deinit if still
/// running); its directory is removed with the test run's scratch root at exit.
final class KeychaindProcess: @unchecked Sendable {
    let process = Process()
    let dataDir: URL
    private(set) var port: UInt16 = 0
    /// The process's stdout and stderr as read so far.
    private let output = OutputReader()

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
        process.standardError = output.pipe
        process.standardOutput = output.pipe
        try process.run()
        output.start()
        if waitForListening { try waitForPort() }
    }

    var log: String { output.text }

    /// Whether the log shows `text` within `timeout` seconds: the server writes a line before it
    /// answers, but the pipe is read by another thread of this process, which may lag behind.
    func logShows(_ text: String, timeout: TimeInterval = 5) -> Bool {
        waitUntil(timeout: timeout) { log.contains(text) }
    }

    private func waitForPort() throws {
        var port: UInt16?
        waitUntil {
            let text = log
            if let range = text.range(of: #"listening on https?://127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                port = UInt16(text[range].split(separator: ":").last!)!
            }
            return port != nil || !process.isRunning
        }
        guard let port else {
            if !process.isRunning { waitForOutputEnd() }
            throw ProcessFailure(description: "keychaind \(process.isRunning ? "did not start listening" : "exited early"):\n\(log)")
        }
        self.port = port
    }

    /// Waits for the process to exit (bounded) and returns its status, once its last log lines
    /// have arrived.
    @discardableResult
    func waitForExit(timeout: TimeInterval = 20) -> Int32? {
        guard waitUntil(timeout: timeout, { !process.isRunning }) else { return nil }
        waitForOutputEnd()
        return process.terminationStatus
    }

    /// After the process's exit, until every byte it wrote is in the log. Not the pipe's end:
    /// a child that another test spawns meanwhile may inherit the pipe's write end and keep it open.
    private func waitForOutputEnd() { waitUntil(timeout: 5) { output.drained } }

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
        let killed = process.terminationReason == .uncaughtSignal && status == SIGKILL
        if status != 0, !killed {
            // A crash is rare and seen only in CI: its log is what tells why.
            let reason = process.terminationReason == .uncaughtSignal ? "signal" : "status"
            print("keychaind (pid \(process.processIdentifier)) stopped with \(reason) \(status.map(String.init) ?? "none"); its log ends:\n\(log.suffix(4000))")
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

/// Reads a child's output pipe on a thread of its own until its end, with plain `poll` and `read`
/// (a `FileHandle.readabilityHandler` is a dispatch source: one not yet cancelled when its pipe
/// closed and the descriptor was reused by the next test's pipe crashed the test process). The
/// thread keeps the pipe until its end, so the descriptor outlives every read of it.
final class OutputReader: @unchecked Sendable {
    // @unchecked: `buffer` is only touched under `lock`.
    let pipe = Pipe()
    private let lock = NSLock()
    private var buffer = ""

    var text: String { lock.withLock { buffer } }

    /// Starts reading; call once the child holds the write end (after `Process.run`).
    func start() {
        let (pipe, lock) = (pipe, lock)
        try? pipe.fileHandleForWriting.close()
        let thread = Thread { [self] in
            let descriptor = pipe.fileHandleForReading.fileDescriptor
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, -1) >= 0 || errno == EINTR else { return }
                // Read under the lock: `drained` then never misses bytes taken from the pipe but
                // not yet in the text.
                let count = lock.withLock {
                    let count = read(descriptor, &chunk, chunk.count)
                    if count > 0 { buffer += String(decoding: chunk[0..<count], as: UTF8.self) }
                    return count
                }
                if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) { return }
            }
        }
        thread.name = "keychaind-output"
        thread.start()
    }

    /// Nothing the process wrote is left unread in the pipe.
    var drained: Bool {
        lock.withLock {
            var unread: Int32 = 0
            return ioctl(pipe.fileHandleForReading.fileDescriptor, UInt(FIONREAD), &unread) == 0 && unread == 0
        }
    }
}

struct ProcessFailure: Error, CustomStringConvertible {
    let description: String
}
