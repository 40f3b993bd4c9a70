import Foundation
import KeychainCore
import KeychainTestSupport
import Logging
import Synchronization
@testable import KeychainStore
@testable import KeychainSQLite

/// A fresh temporary directory, removed on deinit.
final class TemporaryDirectory: @unchecked Sendable {
    let path: String
    init() {
        path = NSTemporaryDirectory() + "keychaind-test-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    /// A data directory path inside (not yet created).
    var dataPath: String { path + "/data" }
}

/// Collects log messages so tests can check what was logged (and that no secret was).
final class CapturingLogHandler: LogHandler, @unchecked Sendable {
    let lines = Mutex<[String]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(
        level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String,
        function: String, line: UInt
    ) {
        let text = "\(level) \(message) \(metadata ?? [:])"
        lines.withLock { $0.append(text) }
    }
}

func testLogger() -> (Logger, CapturingLogHandler) {
    let handler = CapturingLogHandler()
    return (Logger(label: "test", factory: { _ in handler }), handler)
}

/// Polls `condition` every millisecond for up to `seconds`; whether it came true.
func waitUntil(within seconds: Double = 20, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        usleep(1000)
    }
    return try condition()
}

let quietLogger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

/// An initialized and opened data directory in a temp dir.
final class VaultFixture: @unchecked Sendable {
    let directory = TemporaryDirectory()
    let dataDirectory: DataDirectory
    let vault: Vault
    let logs: CapturingLogHandler

    init(rotationThreshold: UInt64 = Keyring.defaultRotationThreshold) throws {
        dataDirectory = DataDirectory(path: directory.dataPath)
        try dataDirectory.initialize(logger: quietLogger)
        let (logger, handler) = testLogger()
        logs = handler
        vault = try dataDirectory.open(logger: logger, rotationThreshold: rotationThreshold)
    }

    deinit { vault.close() }
}

func bytes(hex: String) -> [UInt8] {
    var result: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        result.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    return result
}
