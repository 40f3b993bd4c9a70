#if canImport(Glibc)
import Glibc
#endif
import KeychainConcurrency

/// The audit log's file: JSON lines appended with one `write(2)` each, serialized across
/// libmicrohttpd's worker threads by a mutex, created 0600.
///
/// The file follows its path: before each line an `fstat` checks that the open file still has a
/// name (a deleted log is reopened at once, so no line goes to an unlinked file), and at most every
/// `pathCheckInterval` a `stat` of the path checks that it still names the open file (renamed
/// away by logrotate's move-and-create: reopened within that interval; lines written meanwhile
/// are in the renamed file). A path that cannot be opened or a failed write is an `AuditWriteError`.
/// With `fsync`, every line is `fdatasync`ed before `append` returns; without it, a line is in the
/// kernel's page cache when `append` returns (safe against a crash of keychaind, not of the host).
public final class AuditFile: Sendable {
    public let path: String
    public let fsync: Bool
    /// Nanoseconds between checks that the path still names the open file.
    let pathCheckInterval: UInt64

    private struct State {
        var descriptor: Int32 = -1
        var device: UInt64 = 0
        var inode: UInt64 = 0
        var lastPathCheck: UInt64 = 0
    }

    private let state = PThreadLocked(State())

    public init(path: String, fsync: Bool = false, pathCheckInterval: UInt64 = 1_000_000_000) {
        self.path = path
        self.fsync = fsync
        self.pathCheckInterval = pathCheckInterval
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
                var stale = fstat(state.descriptor, &info) != 0 || info.st_nlink == 0
                let now = Self.coarseNanoseconds()
                if !stale, now &- state.lastPathCheck >= pathCheckInterval {
                    state.lastPathCheck = now
                    stale = stat(path, &info) != 0 || UInt64(info.st_dev) != state.device
                        || UInt64(info.st_ino) != state.inode
                }
                if stale {
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
        state.lastPathCheck = Self.coarseNanoseconds()
    }

    private static func coarseNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
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
