#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
package import Foundation
import KeychainCore
import Logging

/// A keychaind data directory: `master.key` (the key-encryption key, 0600), `keychain.db`
/// (SQLite, WAL; `KeychainSQLite` initialises and opens it) and `admin.token` (the first admin
/// token, 0600). On PostgreSQL it holds the node's copy of `master.key` only.
public struct DataDirectory: Sendable {
    public let path: String
    #if KEYCHAIND_FAULT_INJECTION
    /// Crash points armed in the vaults opened from here (debug builds only).
    public var faults = FaultInjection.none
    #endif

    public init(path: String) { self.path = path }

    public var masterKeyPath: String { "\(path)/master.key" }
    public var databasePath: String { "\(path)/keychain.db" }
    public var adminTokenPath: String { "\(path)/admin.token" }

    /// Writes `token` to `admin.token` (0600, replacing it atomically); the copy made of it is wiped.
    public func writeAdminToken(_ token: String) throws {
        var tokenBytes = Array((token + "\n").utf8)
        defer { SecretBytes.wipe(&tokenBytes) }
        try tokenBytes.withUnsafeBytes { try AtomicFile.write($0, to: adminTokenPath, mode: 0o600) }
    }
    /// The new master key while a rekey is under way (see `Vault.rekey()`).
    public var pendingMasterKeyPath: String { "\(path)/master.key.new" }
    /// The file a running server holds an exclusive `flock` on (see `acquireLock()`).
    public var lockFilePath: String { "\(path)/keychaind.lock" }

    /// Creates the directory (0700) when it does not exist; `notADirectory` when `path` is something else.
    package func createIfMissing() throws {
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else { throw DataDirectoryError.notADirectory(path) }
            return
        }
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw DataDirectoryError(.io, "cannot create the data directory \(path): \(error.localizedDescription)")
        }
    }

    /// A UTC time for the names of files kept beside the database (`20261128T103900Z`).
    package static func timestamp(_ date: Date = Date()) -> String {
        var time = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(
            format: "%04d%02d%02dT%02d%02d%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    /// The error for a database that cannot be read as a keychaind vault.
    package func damaged(_ error: any Error) -> DataDirectoryError {
        DataDirectoryError(
            .damaged,
            "the database \(databasePath) is damaged (\(StoreErrors.keychainError(for: error))); restore it from your backup")
    }

}

/// Why a data directory cannot be initialized or opened. `description` names the path and the fix.
public struct DataDirectoryError: Error, CustomStringConvertible, Equatable {
    public enum Code: Sendable, Equatable {
        case alreadyInitialized, notInitialized, notADirectory, insecureMasterKey, badMasterKey, missingMasterKey
        case wrongMasterKey, damaged, io
        /// The database was migrated by a later keychaind release than this one.
        case newerSchema
        /// Another process (a running server, a restore) holds the data directory's lock.
        case inUse
        /// A file given to restore is not a usable keychaind database.
        case badBackup
    }

    public let code: Code
    public let description: String

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    init(_ description: String) { self.init(.io, description) }

    /// Pattern for `catch let e as DataDirectoryError where e.code == .alreadyInitialized`.
    public static let alreadyInitialized = Code.alreadyInitialized

    package static func notADirectory(_ path: String) -> DataDirectoryError {
        DataDirectoryError(.notADirectory, "\(path) is not a directory; pass the path of a keychaind data directory")
    }
}
