// The harness (not seed code): each seed test class runs against a real keychaind of its own.
import Foundation
import KeychainClient
import XCTest

/// An XCTestCase whose class starts a real `keychaind` (the binary built beside this test bundle)
/// on a free loopback port with a fresh data directory before its first test, points
/// `KeychainClient.shared` (what the SecItem and SecKey functions use) at it with the admin token,
/// and stops it (SIGTERM, by its PID) after the class's last test. The seed test classes derive
/// from it: their class headers, which the seeds do not show, are the one place this harness appears.
class LiveKeychaindTestCase: XCTestCase {
    private static var server: Process?
    private static var dataDirectory: URL?
    /// Why keychaind did not start, thrown by each test of the class.
    private static var startFailure: (any Error)?

    override class func setUp() {
        super.setUp()
        do {
            startFailure = nil
            try start()
        } catch {
            startFailure = error
        }
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        if let failure = Self.startFailure { throw failure }
    }

    override class func tearDown() {
        KeychainClient.shared = nil
        if let server, server.isRunning {
            kill(server.processIdentifier, SIGTERM)
            server.waitUntilExit()
        }
        server = nil
        if let dataDirectory { try? FileManager.default.removeItem(at: dataDirectory.deletingLastPathComponent()) }
        super.tearDown()
    }

    private static func start() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("keychaind-seed-\(UUID().uuidString)")
        let data = root.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let log = root.appendingPathComponent("keychaind.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["serve", "--listen", "127.0.0.1:0", "--data-dir", data.path]
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("KEYCHAIND_") }
        let output = try FileHandle(forWritingTo: log)
        process.standardOutput = output
        process.standardError = output
        try process.run()
        server = process
        dataDirectory = data
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, process.isRunning {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let match = text.range(of: #"listening on http://127\.0\.0\.1:\d+"#, options: .regularExpression) {
                let url = URL(string: String(text[match].dropFirst("listening on ".count)))!
                let token = try String(contentsOf: data.appendingPathComponent("admin.token"), encoding: .utf8)
                KeychainClient.shared = try KeychainClient(
                    baseURL: url, token: token.trimmingCharacters(in: .whitespacesAndNewlines), timeout: 10)
                return
            }
            usleep(20_000)
        }
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "no port in the log: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")"])
    }

    /// The keychaind executable beside the test bundle (`<build>/debug/keychaindPackageTests.xctest`
    /// on Linux; a few levels further down inside the bundle on macOS).
    private static var executable: URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 where !FileManager.default.fileExists(atPath: directory.appendingPathComponent("keychaind").path) {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent("keychaind")
    }
}
