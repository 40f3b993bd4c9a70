#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// An exclusive `flock` on `<data-dir>/keychaind.lock`, held by `keychaind serve` (and by
/// `restore` while it works) for as long as the object lives. The kernel releases it when the
/// process dies, however it dies.
public final class DataDirectoryLock: Sendable {
    private let descriptor: Int32
    public let path: String

    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { Glibc.close(descriptor) }
}

extension DataDirectory {
    /// Takes the directory's lock (creating the directory, 0700, when missing). `inUse` when
    /// another process holds it: a second server on one directory, or a restore under a server.
    public func acquireLock() throws -> DataDirectoryLock {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw DataDirectoryError.notADirectory(path) }
        } else {
            do {
                try FileManager.default.createDirectory(
                    atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw DataDirectoryError(.io, "cannot create the data directory \(path): \(error.localizedDescription)")
            }
        }
        let fd = Glibc.open(lockFilePath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw DataDirectoryError(.io, "cannot open \(lockFilePath): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            Glibc.close(fd)
            if reason == EWOULDBLOCK {
                throw DataDirectoryError(
                    .inUse,
                    "the data directory \(path) is in use: another keychaind process holds \(lockFilePath); "
                        + "stop that server first")
            }
            throw DataDirectoryError(.io, "cannot lock \(lockFilePath): \(String(cString: strerror(reason)))")
        }
        return DataDirectoryLock(descriptor: fd, path: lockFilePath)
    }
}
