#if canImport(Glibc)
package import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import KeychainCore

/// The master key (key-encryption key) on disk: exactly 32 random bytes, mode 0600.
public enum MasterKeyFile {
    public static let size = 32

    /// Makes a new random master key.
    public static func generate() throws -> SecretBytes {
        do { return try SecureRandom.key(size) } catch {
            throw DataDirectoryError("could not generate a master key: the system random generator failed")
        }
    }

    /// Writes `key` to `path` atomically with mode 0600: a temporary file in the same directory
    /// (created 0600), write, fsync, rename over `path`, fsync the directory.
    public static func write(_ key: SecretBytes, to path: String) throws {
        try key.withUnsafeBytes { try AtomicFile.write($0, to: path, mode: 0o600) }
    }

    /// Reads the key at `path`. Refuses a symbolic link, a file that is not a regular file, a
    /// file owned by another user than the process's, a file that group or others may access
    /// (like ssh) and a file whose size is not 32 bytes, with a message naming the path and the
    /// fix. The checks are made on the opened file (`O_NOFOLLOW`, then `fstat`), so the file
    /// read is the file checked.
    public static func read(from path: String) throws -> SecretBytes {
        // O_NONBLOCK: opening a FIFO planted at the path must not hang; it is refused below.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ELOOP {
                throw DataDirectoryError(.insecureMasterKey,
                    "master key \(path) is a symbolic link; keychaind reads only a regular file at that path")
            }
            throw DataDirectoryError("master key \(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw DataDirectoryError("master key \(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw DataDirectoryError("master key \(path) is not a regular file")
        }
        guard info.st_uid == geteuid() else {
            throw DataDirectoryError(.insecureMasterKey,
                "master key \(path) belongs to uid \(info.st_uid), not to this process's uid \(geteuid()); "
                    + "fix it with: chown \(geteuid()) \(path)")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw DataDirectoryError(.insecureMasterKey,
                "master key \(path) is readable by group or others (mode \(String(info.st_mode & 0o777, radix: 8))); "
                    + "fix it with: chmod 600 \(path)")
        }
        guard Int(info.st_size) == size else {
            throw DataDirectoryError(.badMasterKey,
                "master key \(path) has \(info.st_size) bytes, expected \(size): it is damaged or not a keychaind master key; "
                    + "restore it from your backup")
        }
        return try SecretBytes(count: size) { buffer in
            var done = 0
            while done < size {
                let n = Glibc.read(fd, buffer.baseAddress! + done, size - done)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw DataDirectoryError("master key \(path) could not be read completely") }
                done += n
            }
        }
    }
}

/// Atomic, durable small-file writes (master key, admin token).
package enum AtomicFile {
    package static func write(_ bytes: UnsafeRawBufferPointer, to path: String, mode: mode_t) throws {
        let directory = parentDirectory(of: path)
        var template = Array("\(directory)/.tmp-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw DataDirectoryError("cannot create a temporary file in \(directory): \(String(cString: strerror(errno)))")
        }
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var renamed = false
        defer {
            if !renamed { unlink(temporary) }
        }
        do {
            defer { close(fd) }
            guard fchmod(fd, mode) == 0 else { throw DataDirectoryError("cannot set the mode of \(temporary)") }
            var done = 0
            while done < bytes.count {
                let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    throw DataDirectoryError("cannot write \(path): \(String(cString: strerror(errno)))")
                }
                done += n
            }
            guard fsync(fd) == 0 else { throw DataDirectoryError("cannot fsync \(path): \(String(cString: strerror(errno)))") }
        }
        guard rename(temporary, path) == 0 else {
            throw DataDirectoryError("cannot rename into \(path): \(String(cString: strerror(errno)))")
        }
        renamed = true
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }

    /// Renames `source` over `destination` (atomic on POSIX) and fsyncs the directory, so the
    /// new name is durable when it returns.
    package static func renameDurably(_ source: String, to destination: String) throws {
        guard Glibc.rename(source, destination) == 0 else {
            throw DataDirectoryError("cannot rename \(source) to \(destination): \(String(cString: strerror(errno)))")
        }
        fsyncDirectory(parentDirectory(of: destination))
    }

    /// fsyncs a file's contents.
    package static func fsyncFile(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw DataDirectoryError("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard Glibc.fsync(fd) == 0 else { throw DataDirectoryError("cannot fsync \(path): \(String(cString: strerror(errno)))") }
    }

    package static func fsyncDirectory(_ directory: String) {
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = Glibc.fsync(directoryFD)
            close(directoryFD)
        }
    }

    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }
}
