#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
public import KeychainCore
import Logging
import Synchronization

extension Vault {
    /// Writes a sealed backup (`SealedBackup`) of the database to `path` (mode 0600) atomically:
    /// the backend's snapshot (SQLite's online backup API) into a temporary file beside it, sealed
    /// chunk by chunk into a second one, fsync, rename, directory fsync. Needs the vault unlocked
    /// (the backup key lives with the data keys); `interactionNotAllowed` while locked. A backend
    /// whose database has backups of its own (PostgreSQL) refuses with errSecUnimplemented.
    public func backup(to path: String) throws {
        try sealedBackup(in: AtomicFile.parentDirectory(of: path)) { sealed in
            try AtomicFile.renameDurably(sealed, to: path)
        }
    }

    /// A sealed backup for `GET /admin/backup`: the sealed temporary file, open for reading and
    /// already unlinked (the descriptor keeps it alive until it is closed), so the answer is
    /// sent from the file and no name of it is left in the data directory.
    public func backupFile() throws -> ReadOnlyFile {
        try sealedBackup(in: directory?.path ?? FileManager.default.temporaryDirectory.path) { sealed in
            let fd = Glibc.open(sealed, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw KeychainError.io("cannot open the sealed backup: \(String(cString: strerror(errno)))") }
            var info = stat()
            guard fstat(fd, &info) == 0 else {
                let reason = String(cString: strerror(errno))
                Glibc.close(fd)
                throw KeychainError.io("cannot read the sealed backup's size: \(reason)")
            }
            return ReadOnlyFile(descriptor: fd, size: UInt64(info.st_size))
        }
    }

    /// Makes a sealed backup in a temporary file in `directory` and hands its path to `finish`;
    /// the temporary files are removed afterwards. Holds `keyFileOperations`, so a rekey cannot
    /// change the master key between the snapshot and the key it is sealed under.
    private func sealedBackup<T: Sendable>(in directory: String, _ finish: (String) throws -> T) throws -> T {
        if let refusal = backend.backupRefusal { throw refusal }
        return try keyFileOperations.withLock { _ in
            try StoreErrors.map {
                let key = try keyring.backupKey()
                let name = UUID().uuidString
                let snapshot = "\(directory)/.backup-\(name).db"
                let sealed = "\(directory)/.backup-\(name).sealed"
                defer {
                    unlink(snapshot)
                    unlink(sealed)
                }
                try makeSnapshot(at: snapshot)
                try SealedBackup.seal(from: snapshot, to: sealed, key: key)
                let result = try finish(sealed)
                noteBackup()
                return result
            }
        }
    }

    private func makeSnapshot(at temporary: String) throws {
        // Created 0600 before SQLite opens it, so the copy is never readable by others.
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw KeychainError.io("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        Glibc.close(fd)
        try backend.snapshot(into: temporary)
    }

    private func noteBackup() {
        backups.withLock {
            $0.last = Date()
            $0.completed += 1
        }
        logger.info("backup completed")
    }
}
