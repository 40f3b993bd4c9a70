import Foundation
import KeychaindTesting

/// Starts one of the tests' Python servers (beside this file) with Debian's python3 (or
/// `python`), whose first line of output is `listening PORT`, and returns that port; a server
/// that says anything else is stopped and the start fails with what it said.
enum LoopbackPythonServer {
    static func start(_ process: Process, script name: String, arguments: [String], python: String = "/usr/bin/python3")
        throws -> Int
    {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(name)
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script.path] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            line += chunk
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("listening "), let port = Int(text.dropFirst(10).prefix { $0.isNumber }) else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            throw ProcessFailure(description: "\(name) did not start: \(text)")
        }
        return port
    }
}
