import Foundation
public import KeychainCore

/// Everything `keychaind serve` is configured with. Each key, its type and default:
///
/// | key | type | default | env |
/// | --- | --- | --- | --- |
/// | `listen` | `HOST:PORT` (IPv6 as `[::1]:8420`) | `127.0.0.1:8420` | `KEYCHAIND_LISTEN` |
/// | `dataDir` | path | `./data` | `KEYCHAIND_DATA_DIR` |
/// | `logLevel` | trace, debug, info, notice, warning, error, critical | `info` | `KEYCHAIND_LOG_LEVEL` |
/// | `threads` | integer ≥ 0, 0 = two per core | `0` | `KEYCHAIND_THREADS` |
/// | `server.trustedProxies` | IPv4/IPv6 CIDRs (a bare address: /32, /128) whose `X-Forwarded-For` names the client; a TOML array in the file, comma-separated in the environment | empty | `KEYCHAIND_SERVER_TRUSTED_PROXIES` |
/// | `server.publicURL` | the `https://` URL browsers reach keychaind at (plain `http://` only to loopback), no path, query or fragment; the connect flow's redirect URI is `<publicURL>/v1/oauth/callback`; empty = the connect routes answer errSecParam | empty | `KEYCHAIND_SERVER_PUBLIC_URL` |
/// | `connect.sessionSeconds` | integer ≥ 10, how long a connect session lives | `600` | `KEYCHAIND_CONNECT_SESSION_SECONDS` |
/// | `connect.maxWaitSeconds` | integer ≥ 1, the longest `wait` of `GET /v1/connect/{id}` | `25` | `KEYCHAIND_CONNECT_MAX_WAIT_SECONDS` |
/// | `connect.maxWaitsPerClient` | integer ≥ 1, waits one client holds at once | `16` | `KEYCHAIND_CONNECT_MAX_WAITS_PER_CLIENT` |
/// | `connect.returnToOrigins` | origins (`https://app.example.com`, plain `http` only to loopback) a session's `returnTo` may be on; a TOML array in the file, comma-separated in the environment | empty | `KEYCHAIND_CONNECT_RETURN_TO_ORIGINS` |
/// | `limits.maxBodyBytes` | integer ≥ 1 | `1048576` | `KEYCHAIND_LIMITS_MAX_BODY_BYTES` |
/// | `limits.maxConnections` | integer ≥ 1 | `1024` | `KEYCHAIND_LIMITS_MAX_CONNECTIONS` |
/// | `limits.maxConnectionsPerAddress` | integer ≥ 0, 0 = no limit | `128` | `KEYCHAIND_LIMITS_MAX_CONNECTIONS_PER_ADDRESS` |
/// | `limits.connectionMemoryBytes` | integer ≥ 8192 | `32768` | `KEYCHAIND_LIMITS_CONNECTION_MEMORY_BYTES` |
/// | `limits.idleTimeoutSeconds` | integer ≥ 1 | `30` | `KEYCHAIND_LIMITS_IDLE_TIMEOUT_SECONDS` |
/// | `limits.headerTimeoutSeconds` | integer ≥ 1 | `10` | `KEYCHAIND_LIMITS_HEADER_TIMEOUT_SECONDS` |
/// | `limits.shutdownGraceSeconds` | integer ≥ 0 | `10` | `KEYCHAIND_LIMITS_SHUTDOWN_GRACE_SECONDS` |
/// | `limits.maxQueryParameters` | integer ≥ 0, 0 = no limit | `256` | `KEYCHAIND_LIMITS_MAX_QUERY_PARAMETERS` |
/// | `limits.authFailuresPerMinute` | integer ≥ 0, failed authentications per client address before 429, 0 = no limit | `60` | `KEYCHAIND_LIMITS_AUTH_FAILURES_PER_MINUTE` |
/// | `limits.authFailureAddresses` | integer ≥ 1, addresses tracked by that limit | `10000` | `KEYCHAIND_LIMITS_AUTH_FAILURE_ADDRESSES` |
/// | `limits.loginFailuresPerRolePerMinute` | integer ≥ 0, refused workload logins per login role before 429, 0 = no limit | `600` | `KEYCHAIND_LIMITS_LOGIN_FAILURES_PER_ROLE_PER_MINUTE` |
/// | `login.jwksStaleSeconds` | integer ≥ 0, how long an issuer's last good key set serves while it cannot be reached | `3600` | `KEYCHAIND_LOGIN_JWKS_STALE_SECONDS` |
/// | `vault.secretMountAlias` | boolean, `secret/` on the Vault surface is the caller's first access group | `false` | `KEYCHAIND_VAULT_SECRET_MOUNT_ALIAS` |
/// | `limits.maxAnswerBytes` | integer ≥ 65536, bytes of a page of items (one larger item comes alone) | `16777216` | `KEYCHAIND_LIMITS_MAX_ANSWER_BYTES` |
/// | `quota.items` | integer ≥ 0, items one access group holds, 0 = no limit | `10000000` | `KEYCHAIND_QUOTA_ITEMS` |
/// | `quota.secretBytes` | integer ≥ 0, secret bytes one access group holds, 0 = no limit | `10737418240` | `KEYCHAIND_QUOTA_SECRET_BYTES` |
/// | `quota.attributeBytes` | integer ≥ 0, attribute bytes one access group holds (each string's UTF-8 bytes, each data value's bytes, 8 per number, flag or date), 0 = no limit | `10737418240` | `KEYCHAIND_QUOTA_ATTRIBUTE_BYTES` |
/// | `tls.certFile` | path, empty = plain HTTP | empty | `KEYCHAIND_TLS_CERT_FILE` |
/// | `tls.keyFile` | path | empty | `KEYCHAIND_TLS_KEY_FILE` |
/// | `tls.priorities` | GnuTLS priority string | `ServerConfiguration.defaultTLSPriorities` | `KEYCHAIND_TLS_PRIORITIES` |
/// | `tls.allowPlaintext` | boolean, plain HTTP on an address other than loopback | `false` | `KEYCHAIND_TLS_ALLOW_PLAINTEXT` |
/// | `backup.interval` | integer ≥ 0, seconds between scheduled backups, 0 = off | `0` | `KEYCHAIND_BACKUP_INTERVAL` |
/// | `backup.directory` | path, empty = `<dataDir>/backups` | empty | `KEYCHAIND_BACKUP_DIRECTORY` |
/// | `backup.keep` | integer ≥ 1, newest backups kept | `7` | `KEYCHAIND_BACKUP_KEEP` |
/// | `audit.enabled` | boolean | `true` | `KEYCHAIND_AUDIT_ENABLED` |
/// | `audit.file` | path, empty = `<dataDir>/audit.log` | empty | `KEYCHAIND_AUDIT_FILE` |
/// | `audit.failClosed` | boolean | `false` | `KEYCHAIND_AUDIT_FAIL_CLOSED` |
/// | `audit.fsync` | boolean | `false` | `KEYCHAIND_AUDIT_FSYNC` |
/// | `audit.unauthenticatedLinesPerMinute` | integer ≥ 0, audit lines per client address for requests without a token (unknown routes), 0 = no limit | `60` | `KEYCHAIND_AUDIT_UNAUTHENTICATED_LINES_PER_MINUTE` |
/// | `refresh.caFile` | path of PEM CAs token endpoints are verified against, empty = the system's | empty | `KEYCHAIND_REFRESH_CA_FILE` |
/// | `refresh.timeoutSeconds` | integer ≥ 1, one token endpoint call at most | `10` | `KEYCHAIND_REFRESH_TIMEOUT_SECONDS` |
/// | `refresh.waitSeconds` | integer ≥ 1, how long a fetch waits for another's refresh | `15` | `KEYCHAIND_REFRESH_WAIT_SECONDS` |
/// | `refresh.intervalSeconds` | integer ≥ 0, how often the background refresher looks for due tokens, 0 = off | `5` | `KEYCHAIND_REFRESH_INTERVAL_SECONDS` |
/// | `refresh.concurrency` | integer ≥ 1, how many exchanges the background refresher runs at once (each for another service) | `4` | `KEYCHAIND_REFRESH_CONCURRENCY` |
/// | `refresh.maxRetryAfterSeconds` | integer ≥ 1, the longest a provider's `Retry-After` holds calls to its token endpoint | `600` | `KEYCHAIND_REFRESH_MAX_RETRY_AFTER_SECONDS` |
/// | `storage.backend` | `sqlite` (one node, `<dataDir>/keychain.db`) or `postgresql` (several nodes) | `sqlite` | `KEYCHAIND_STORAGE_BACKEND` |
/// | `storage.postgresql.url` | libpq connection string (multi-host with `target_session_attrs=read-write`) | empty | `KEYCHAIND_STORAGE_POSTGRESQL_URL` |
/// | `storage.postgresql.connectTimeoutSeconds` | integer ≥ 1, connecting at most | `5` | `KEYCHAIND_STORAGE_POSTGRESQL_CONNECT_TIMEOUT_SECONDS` |
/// | `storage.postgresql.statementTimeoutSeconds` | integer ≥ 1, one statement (and unacknowledged sends) at most | `10` | `KEYCHAIND_STORAGE_POSTGRESQL_STATEMENT_TIMEOUT_SECONDS` |
///
/// Precedence: defaults < config file < environment < command-line flags.
public struct ServerConfiguration: Sendable, Equatable {
    public var listen: ListenAddress = ListenAddress(host: "127.0.0.1", port: 8420)
    public var dataDir: String = "./data"
    public var logLevel: LogLevel = .info
    public var threads: Int = 0
    public var trustedProxies = TrustedProxies()
    /// Where browsers reach keychaind (`server.publicURL`), nil while unset: the connect flow's
    /// redirect URI and authorization URLs are built on it.
    public var publicURL: PublicURL?
    public var connectSessionSeconds: Int = 600
    public var connectMaxWaitSeconds: Int = 25
    public var connectMaxWaitsPerClient: Int = 16
    public var connectReturnToOrigins: [PublicURL] = []
    public var maxBodyBytes: Int = 1_048_576
    public var maxConnections: Int = 1024
    public var maxConnectionsPerAddress: Int = 128
    public var connectionMemoryBytes: Int = 32_768
    public var idleTimeoutSeconds: Int = 30
    public var headerTimeoutSeconds: Int = 10
    public var shutdownGraceSeconds: Int = 10
    public var maxQueryParameters: Int = 256
    public var authFailuresPerMinute: Int = 60
    public var authFailureAddresses: Int = 10_000
    public var maxAnswerBytes: Int = 16 << 20
    public var loginFailuresPerRolePerMinute: Int = 600
    public var jwksStaleSeconds: Int = 3600
    /// Vault tools default to the mount `secret/`: when set, it names the caller's first group (`VaultMount`).
    public var vaultSecretMountAlias: Bool = false
    public var quotaItems: Int = 10_000_000
    public var quotaSecretBytes: Int = 10 << 30
    public var quotaAttributeBytes: Int = 10 << 30
    public var tlsCertFile: String = ""
    public var tlsKeyFile: String = ""
    public var tlsPriorities: String = ServerConfiguration.defaultTLSPriorities
    public var tlsAllowPlaintext: Bool = false
    public var backupInterval: Int = 0
    public var backupDirectory: String = ""
    public var backupKeep: Int = 7

    /// Where scheduled backups go: `backup.directory`, or `<dataDir>/backups` when it is empty.
    public var effectiveBackupDirectory: String {
        backupDirectory.isEmpty ? "\(dataDir)/backups" : backupDirectory
    }
    public var auditEnabled: Bool = true
    public var auditFile: String = ""
    public var auditFailClosed: Bool = false
    public var auditFsync: Bool = false
    public var auditUnauthenticatedLinesPerMinute: Int = 60
    public var refreshCAFile: String = ""
    public var refreshTimeoutSeconds: Int = 10
    public var refreshWaitSeconds: Int = 15
    public var refreshIntervalSeconds: Int = 5
    public var refreshConcurrency: Int = 4
    public var refreshMaxRetryAfterSeconds: Int = 600
    /// How long after an event its delivery is retried (`webhooks.retrySeconds`): a day.
    public var webhookRetrySeconds: Int = 86_400
    public var storageBackend: StorageBackend = .sqlite
    public var postgresqlURL: String = ""
    public var postgresqlConnectTimeoutSeconds: Int = 5
    public var postgresqlStatementTimeoutSeconds: Int = 10

    /// Where the vault lives (`storage.backend`).
    public enum StorageBackend: String, Sendable, CaseIterable {
        /// One node: SQLite in the data directory.
        case sqlite
        /// Several active nodes over one PostgreSQL database (`storage.postgresql.*`).
        case postgresql
    }

    /// TLS 1.3 and 1.2 only; key exchange by ECDHE only (forward secrecy: no RSA key transport,
    /// no finite-field DHE); AEAD ciphers only (no CBC, so no MAC-then-encrypt padding oracles).
    public static let defaultTLSPriorities =
        "SECURE128:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA"
        + ":-CIPHER-ALL:+AES-256-GCM:+CHACHA20-POLY1305:+AES-128-GCM:-MAC-ALL:+AEAD"

    /// Refuses to serve plain HTTP on an address other than loopback unless `tls.allowPlaintext`
    /// says so: tokens and secrets would cross the network in clear.
    public func checkTransport() throws {
        guard tlsCertFile.isEmpty, !tlsAllowPlaintext, !listen.isLoopback else { return }
        throw ConfigurationError(
            "listen \(listen) is not a loopback address and no TLS is configured: tokens and secrets would cross "
                + "the network in clear. Set tls.certFile and tls.keyFile (KEYCHAIND_TLS_CERT_FILE, KEYCHAIND_TLS_KEY_FILE), "
                + "or, behind a TLS-terminating proxy on a trusted network, tls.allowPlaintext = true "
                + "(KEYCHAIND_TLS_ALLOW_PLAINTEXT=true)")
    }

    /// `storage.postgresql.url` is needed with `storage.backend = "postgresql"`.
    public func checkStorage() throws {
        guard storageBackend == .postgresql, postgresqlURL.isEmpty else { return }
        throw ConfigurationError(
            "storage.backend is \"postgresql\" but storage.postgresql.url is empty: set it to a libpq connection string "
                + "(KEYCHAIND_STORAGE_POSTGRESQL_URL), e.g. \"host=db1,db2 dbname=keychaind target_session_attrs=read-write\"")
    }

    /// The worker threads to run on a machine of `processors` cores: `threads`, or two per core
    /// when it is 0 (docs/decisions.md, "libmicrohttpd").
    public func workerThreads(processors: Int) -> Int { threads > 0 ? threads : 2 * max(1, processors) }

    /// Where the audit log is written: `audit.file`, or `<dataDir>/audit.log`.
    public var auditFilePath: String { auditFile.isEmpty ? "\(dataDir)/audit.log" : auditFile }

    public init() {}

    public enum LogLevel: String, Sendable, CaseIterable {
        case trace, debug, info, notice, warning, error, critical
    }
}

/// `HOST:PORT`; an IPv6 host is written in brackets (`[::1]:8420`).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    public init?(parsing text: String) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return nil
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") { return nil }
        }
        guard !host.isEmpty, let port = UInt16(portText) else { return nil }
        self.host = String(host)
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Whether the host is a loopback address: 127.0.0.0/8, `::1`, or 127.0.0.0/8 mapped into IPv6.
    public var isLoopback: Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) { return bytes[15] == 1 }
        return bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
    }
}
