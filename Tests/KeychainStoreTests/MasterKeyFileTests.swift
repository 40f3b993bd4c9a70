import Foundation
import KeychainCore
import Testing
@testable import KeychainStore

/// Issue 29: `MasterKeyFile.read` checks the file it opened (`O_NOFOLLOW`, `fstat`), not a name
/// that could be swapped between a check and the open.
struct MasterKeyFileTests {
    private func expectRefusal(_ path: String, code: DataDirectoryError.Code? = nil, containing text: String) {
        do {
            _ = try MasterKeyFile.read(from: path)
            Issue.record("\(path) was read")
        } catch let error as DataDirectoryError {
            if let code { #expect(error.code == code, "\(error)") }
            #expect(error.description.contains(text), "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func aSymbolicLinkIsRefusedEvenWhenItPointsAtAGoodKey() throws {
        let temp = TemporaryDirectory()
        let target = temp.path + "/elsewhere.key"
        try MasterKeyFile.write(try MasterKeyFile.generate(), to: target)
        #expect(try MasterKeyFile.read(from: target).count == 32)
        let link = temp.path + "/master.key"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        expectRefusal(link, code: .insecureMasterKey, containing: "is a symbolic link")
    }

    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() throws {
        let temp = TemporaryDirectory()
        let path = temp.path + "/master.key"
        #expect(mkfifo(path, 0o600) == 0)
        expectRefusal(path, containing: "is not a regular file")
    }

    /// Only root can give a file to another user.
    @Test(.enabled(if: geteuid() == 0, "needs root to chown"))
    func aKeyOwnedByAnotherUserIsRefused() throws {
        let temp = TemporaryDirectory()
        let path = temp.path + "/master.key"
        try MasterKeyFile.write(try MasterKeyFile.generate(), to: path)
        #expect(chown(path, 65534, 65534) == 0)
        expectRefusal(path, code: .insecureMasterKey, containing: "belongs to uid 65534, not to this process's uid 0")
        expectRefusal(path, containing: "chown 0 \(path)")
        #expect(chown(path, 0, 0) == 0)
        #expect(try MasterKeyFile.read(from: path).count == 32)
    }
}
