import Foundation
import Testing

@testable import KeychainObservability

/// The audit log's file: one write per line, created 0600, following its path.
struct AuditFileTests {
    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("audit-\(UUID().uuidString).log").path
    }

    @Test func concurrentAppendsNeverInterleave() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = AuditFile(path: path)
        try file.open()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for line in 0..<500 {
                let text = "{\"thread\":\(thread),\"line\":\(line),\"pad\":\"\(String(repeating: "x", count: 200))\"}\n"
                try? file.append(Array(text.utf8))
            }
        }
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 4000)
        #expect(lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func followsItsPathWhenTheFileIsRotatedAway() throws {
        let path = Self.temporaryPath()
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + ".1")
        }
        let file = AuditFile(path: path, pathCheckInterval: 0)
        try file.append(Array("one\n".utf8))
        try FileManager.default.moveItem(atPath: path, toPath: path + ".1")
        try file.append(Array("two\n".utf8))
        #expect(try String(contentsOfFile: path + ".1", encoding: .utf8) == "one\n")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "two\n")
    }

    @Test func aPathThatIsADirectoryCannotBeWritten() throws {
        let path = Self.temporaryPath()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: AuditWriteError.self) { try AuditFile(path: path).append(Array("x\n".utf8)) }
    }

    @Test func aDeletedFileIsReopenedAtOnce() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = AuditFile(path: path)  // the path itself is checked only once a second
        try file.append(Array("one\n".utf8))
        try FileManager.default.removeItem(atPath: path)
        try file.append(Array("two\n".utf8))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "two\n")
    }
}
