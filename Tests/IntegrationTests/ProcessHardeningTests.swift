import Foundation
import KeychaindTesting
import Testing

/// Issue 29, core dumps: `serve` clears its "dumpable" attribute, so no core file holds its keys
/// and other processes of its user cannot read its memory. The kernel shows it in the owner of
/// `/proc/<pid>/status`: the process's user while dumpable, root once it is not.
struct ProcessHardeningTests {
    @Test func theServingProcessIsNotDumpable() throws {
        let home = KeychaindProcess.temporaryDirectory()
        var command = [KeychaindProcess.executable.path, "serve", "--listen", "127.0.0.1:0", "--data-dir", home.appendingPathComponent("data").path]
        if getuid() == 0 {
            // Root's /proc entries belong to root either way: serve as nobody to see the change.
            #expect(chown(home.path, 65534, 65534) == 0)
            command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"] + command
        }
        let logPath = home.appendingPathComponent("server.log").path
        #expect(FileManager.default.createFile(atPath: logPath, contents: nil))
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("KEYCHAIND_") }
        process.standardOutput = log
        process.standardError = log
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGTERM) }
            process.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(20)
        var text = ""
        while Date() < deadline, process.isRunning {
            text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if text.contains("listening on") { break }
            usleep(50_000)
        }
        try #require(text.contains("listening on"), "keychaind did not start:\n\(text)")
        var info = stat()
        #expect(stat("/proc/\(process.processIdentifier)/status", &info) == 0)
        Hardening.report("process hardening: /proc/<pid>/status of a server run as uid \(getuid() == 0 ? 65534 : getuid()) belongs to uid \(info.st_uid)")
        #expect(info.st_uid == 0, "the server is still dumpable")
        #expect(!text.contains("could not mark the process as not dumpable"), "\(text)")
    }
}
