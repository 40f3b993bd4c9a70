import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The audit log's file: JSON lines appended with one `write(2)` each, serialized across
/// libmicrohttpd's worker threads by a mutex, created 0600.
///
/// The file follows its path: before each line it checks (one `stat`) that the path still names
/// the open file, and reopens it when it was renamed or removed (logrotate's move-and-create works
/// without a signal). A path that cannot be opened or a failed write is an `AuditWriteError`.
/// With `fsync`, every line is `fdatasync`ed before `append` returns; without it, a line is in the
/// kernel's page cache when `append` returns (safe against a crash of keychaind, not of the host).
public final class AuditFile: Sendable {
    public let path: String
    public let fsync: Bool

    private struct State {
        var descriptor: Int32 = -1
        var device: UInt64 = 0
        var inode: UInt64 = 0
    }

    private let state = Mutex(State())

    public init(path: String, fsync: Bool = false) {
        self.path = path
        self.fsync = fsync
    }

    deinit {
        state.withLock { if $0.descriptor >= 0 { close($0.descriptor) } }
    }

    /// Opens (or creates) the file now, so a bad path is reported at start.
    public func open() throws {
        try state.withLock { state throws in try reopen(&state) }
    }

    /// Appends `line` (which must end in a newline) as one write.
    public func append(_ line: [UInt8]) throws {
        try state.withLock { state throws in
            if state.descriptor >= 0 {
                var info = stat()
                if stat(path, &info) != 0 || UInt64(info.st_dev) != state.device || UInt64(info.st_ino) != state.inode {
                    close(state.descriptor)
                    state.descriptor = -1
                }
            }
            if state.descriptor < 0 { try reopen(&state) }
            try line.withUnsafeBytes { bytes throws in
                var offset = 0
                while offset < bytes.count {
                    let written = write(state.descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw AuditWriteError(path: path, operation: "write", errno: errno)
                    }
                    offset += written
                }
            }
            if fsync, fdatasync(state.descriptor) != 0 {
                throw AuditWriteError(path: path, operation: "fdatasync", errno: errno)
            }
        }
    }

    private func reopen(_ state: inout State) throws {
        if state.descriptor >= 0 {
            close(state.descriptor)
            state.descriptor = -1
        }
        let descriptor = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw AuditWriteError(path: path, operation: "open", errno: errno) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw AuditWriteError(path: path, operation: "open (not a regular file)", errno: EINVAL)
        }
        state.descriptor = descriptor
        state.device = UInt64(info.st_dev)
        state.inode = UInt64(info.st_ino)
    }
}

/// The audit log could not be written.
public struct AuditWriteError: Error, CustomStringConvertible {
    public let path: String
    public let operation: String
    public let errno: Int32

    public var description: String {
        "audit log \(path): \(operation) failed: \(String(cString: strerror(errno)))"
    }
}
