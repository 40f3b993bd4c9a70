import Foundation
import KeychainCore
public import Logging
import Synchronization

/// Scheduled backups: every `interval` seconds, `vault.backup(to:)` writes the sealed backup
/// `keychain-<UTC time>.backup` into `directory` (created 0700), then only the newest `keep`
/// such files are kept. A failed backup is logged and retried at the next tick; while the vault
/// is locked there is no backup key, so each tick fails (logged) until it is unlocked.
public final class BackupScheduler: Sendable {
    public let directory: String
    public let interval: Double
    public let keep: Int
    private let vault: Vault
    private let logger: Logger
    private let stopped = Mutex(false)
    private let finished = DispatchSemaphore(value: 0)

    public init(vault: Vault, directory: String, intervalSeconds: Int, keep: Int, logger: Logger) {
        self.vault = vault
        self.directory = directory
        self.interval = Double(intervalSeconds)
        self.keep = max(1, keep)
        self.logger = logger
    }

    /// Starts the background thread; the first backup is taken one interval after start.
    public func start() throws {
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw DataDirectoryError(.io, "backup.directory \(directory) cannot be created: \(error.localizedDescription)")
        }
        let thread = Thread { [self] in
            defer { finished.signal() }
            var next = Date().addingTimeInterval(interval)
            while !stopped.withLock({ $0 }) {
                if Date() >= next {
                    runOnce()
                    next = Date().addingTimeInterval(interval)
                }
                usleep(100_000)
            }
        }
        thread.name = "keychaind-backup"
        thread.start()
        logger.info(
            "scheduled backups on", metadata: ["directory": "\(directory)", "interval": "\(Int(interval))s", "keep": "\(keep)"])
    }

    /// Stops the thread and waits for a backup in progress to finish.
    public func stop() {
        let wasRunning = stopped.withLock { stopped -> Bool in
            defer { stopped = true }
            return !stopped
        }
        if wasRunning { finished.wait() }
    }

    /// Takes one backup now and prunes; returns the file written, nil on failure (logged).
    @discardableResult
    public func runOnce() -> String? {
        var name = "keychain-\(DataDirectory.timestamp()).backup"
        if FileManager.default.fileExists(atPath: "\(directory)/\(name)") {
            name = "keychain-\(DataDirectory.timestamp())-\(UUID().uuidString.prefix(8)).backup"
        }
        let path = "\(directory)/\(name)"
        do {
            try vault.backup(to: path)
            logger.notice("scheduled backup written", metadata: ["path": "\(path)"])
        } catch {
            logger.error("scheduled backup failed", metadata: ["directory": "\(directory)", "reason": "\(error)"])
            return nil
        }
        prune()
        return path
    }

    /// Backup files in `directory`, oldest first (the names sort by time).
    public func backups() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasPrefix("keychain-") && $0.hasSuffix(".backup") }.sorted()
    }

    private func prune() {
        let all = backups()
        guard all.count > keep else { return }
        for name in all.prefix(all.count - keep) {
            do {
                try FileManager.default.removeItem(atPath: "\(directory)/\(name)")
            } catch {
                logger.warning("cannot remove an old backup", metadata: ["file": "\(name)"])
            }
        }
    }
}
