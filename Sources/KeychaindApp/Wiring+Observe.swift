import Foundation
public import KeychainConfig
import KeychainCore
public import KeychainHTTP
public import KeychainObservability
public import KeychainStore
public import Logging

/// The audit log, the request metrics and `/metrics`'s sources, made from the configuration.
public struct Observe: Sendable {
    /// The label of the audit HMAC key, derived from the vault's first data key.
    public static let auditKeyLabel = "keychaind audit log hmac key v1"

    public let metrics = RequestMetrics()
    /// The audit file the auditor writes to; both nil when auditing is off.
    public let auditLog: AuditLog?
    public let auditor: Auditor?

    /// Opens the audit log (when enabled). A log that cannot be opened stops the server when
    /// `audit.failClosed`; otherwise it is reported and tried again on every request.
    public static func make(_ configuration: ServerConfiguration, vault: Vault, logger: Logger) throws -> Observe {
        guard configuration.auditEnabled else {
            logger.warning("audit log disabled (audit.enabled = false)", source: Wiring.logSource)
            return Observe(auditLog: nil, auditor: nil)
        }
        let keyring = vault.keyring
        let file = AuditFile(path: configuration.auditFilePath, fsync: configuration.auditFsync)
        do {
            try file.open()
        } catch {
            if configuration.auditFailClosed {
                throw ConfigurationError("audit.file: \(error) (audit.failClosed is true)")
            }
            logger.error(
                "audit log cannot be opened; requests are served and not audited", metadata: ["error": "\(error)"],
                source: Wiring.logSource)
        }
        logger.info(
            "audit log",
            metadata: [
                "path": "\(file.path)", "failClosed": "\(configuration.auditFailClosed)",
                "fsync": "\(configuration.auditFsync)",
            ], source: Wiring.logSource)
        let auditLog = AuditLog(file: file, failClosed: configuration.auditFailClosed, logger: logger)
        let auditor = Auditor(sink: auditLog, mac: { keyring.derivedMAC(label: auditKeyLabel, $0, into: $1) })
        return Observe(auditLog: auditLog, auditor: auditor)
    }

    /// What `/metrics` reads at scrape time. `lastBackup`: nil until the backup feature hands in
    /// its clock (the family is left out).
    func sources(
        vault: Vault, isLocked: @escaping @Sendable () -> Bool, lastBackup: (@Sendable () -> Date?)? = nil,
        refresh: (@Sendable () -> RefreshStatistics)? = nil
    ) -> MetricsSources {
        let keyring = vault.keyring
        let items = vault.items
        var auditWriteFailures: (@Sendable () -> UInt64)?
        if let auditLog { auditWriteFailures = { auditLog.writeFailures } }
        let keyringState: @Sendable () -> (term: UInt32, encryptions: UInt64) = {
            (keyring.currentTerm, keyring.currentTermEncryptions)
        }
        var sources = MetricsSources(
            itemCounts: { try items.countByClass() }, isLocked: isLocked, keyring: keyringState,
            lastBackup: lastBackup, auditWriteFailures: auditWriteFailures,
            reencryption: { vault.status.reencryption })
        // PostgreSQL shares WAL flushes itself: no group commit of ours to count there.
        if vault.database == nil { sources.commits = { vault.commitStatistics } }
        sources.refresh = refresh
        if vault.database != nil { sources.database = { vault.database ?? DatabaseStatistics() } }
        return sources
    }

    /// The TLS private key may not be readable by others (group may read it: Debian's
    /// `ssl-cert` group convention) and must be a regular file.
    public static func checkTLSKeyFile(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ConfigurationError("tls.keyFile: cannot read \(path)")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw ConfigurationError("tls.keyFile: \(path) is not a regular file")
        }
        guard info.st_mode & S_IROTH == 0 else {
            throw ConfigurationError("tls.keyFile: \(path) is readable by others; chmod o-r (0600 or 0640)")
        }
    }
}
