import Foundation
import KeychainCore

/// A configuration problem, reported at start; the description names the key and where it came from.
public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Builds a `ServerConfiguration` from defaults, a config file, `KEYCHAIND_*` environment
/// variables and command-line flags, each layer over the one before. Unknown keys and bad values
/// are errors naming the key, never silently defaulted.
public enum ConfigurationLoader {
    /// A setting's key and where it was given, for error messages.
    public struct Setting: Equatable, Sendable {
        public let key: String
        public let value: String
        public let source: String
        public init(key: String, value: String, source: String) {
            self.key = key
            self.value = value
            self.source = source
        }
    }

    /// Every key the configuration knows, as written in the file.
    public static let keys = [
        "listen", "dataDir", "logLevel", "threads", "server.trustedProxies", "server.publicURL",
        "connect.sessionSeconds", "connect.maxWaitSeconds", "connect.maxWaitsPerClient", "connect.returnToOrigins",
        "limits.maxBodyBytes", "limits.maxConnections", "limits.maxConnectionsPerAddress",
        "limits.connectionMemoryBytes", "limits.idleTimeoutSeconds", "limits.headerTimeoutSeconds",
        "limits.shutdownGraceSeconds", "limits.maxQueryParameters",
        "limits.authFailuresPerMinute", "limits.authFailureAddresses", "limits.maxAnswerBytes",
        "limits.loginFailuresPerRolePerMinute", "login.jwksStaleSeconds", "vault.secretMountAlias",
        "quota.items", "quota.secretBytes", "quota.attributeBytes",
        "tls.certFile", "tls.keyFile", "tls.priorities", "tls.allowPlaintext",
        "backup.interval", "backup.directory", "backup.keep",
        "audit.enabled", "audit.file", "audit.failClosed", "audit.fsync", "audit.unauthenticatedLinesPerMinute",
        "refresh.caFile", "refresh.timeoutSeconds", "refresh.waitSeconds", "refresh.intervalSeconds",
        "refresh.concurrency", "refresh.maxRetryAfterSeconds", "webhooks.retrySeconds",
        "storage.backend", "storage.postgresql.url", "storage.postgresql.connectTimeoutSeconds",
        "storage.postgresql.statementTimeoutSeconds",
    ]

    /// The environment variable for a key: `limits.maxBodyBytes` → `KEYCHAIND_LIMITS_MAX_BODY_BYTES`;
    /// a run of capitals stays one word (`server.publicURL` → `KEYCHAIND_SERVER_PUBLIC_URL`).
    public static func environmentName(for key: String) -> String {
        var name = "KEYCHAIND_"
        var previous: Character = "."
        for character in key {
            if character == "." {
                name.append("_")
            } else if character.isUppercase {
                if !previous.isUppercase, previous != "." { name.append("_") }
                name.append(character)
            } else {
                name.append(character.uppercased())
            }
            previous = character
        }
        return name
    }

    /// Loads the configuration. `fileText`/`filePath`: the config file's contents and name (nil:
    /// none); `environment`: the process environment; `flags`: keys given on the command line.
    public static func load(
        fileText: String?, filePath: String = "config", environment: [String: String], flags: [String: String]
    ) throws -> ServerConfiguration {
        var settings: [Setting] = []
        if let fileText { settings += try ConfigFileParser.parse(fileText, path: filePath) }
        for key in keys {
            let variable = environmentName(for: key)
            if let value = environment[variable] { settings.append(Setting(key: key, value: value, source: variable)) }
        }
        for (key, value) in flags.sorted(by: { $0.key < $1.key }) {
            settings.append(Setting(key: key, value: value, source: "--\(flagName(for: key))"))
        }
        var configuration = ServerConfiguration()
        for setting in settings { try apply(setting, to: &configuration) }
        if configuration.tlsCertFile.isEmpty != configuration.tlsKeyFile.isEmpty {
            throw ConfigurationError("tls.certFile and tls.keyFile must be given together")
        }
        return configuration
    }

    /// Reads the file at `path` (if any) and loads.
    public static func load(
        filePath: String?, environment: [String: String], flags: [String: String]
    ) throws -> ServerConfiguration {
        var fileText: String?
        if let filePath {
            guard let data = FileManager.default.contents(atPath: filePath) else {
                throw ConfigurationError("cannot read config file \(filePath)")
            }
            guard let text = String(data: data, encoding: .utf8) else {
                throw ConfigurationError("config file \(filePath) is not UTF-8")
            }
            fileText = text
        }
        return try load(fileText: fileText, filePath: filePath ?? "config", environment: environment, flags: flags)
    }

    static func flagName(for key: String) -> String {
        switch key {
        case "dataDir": "data-dir"
        default: key
        }
    }

    static func apply(_ setting: Setting, to configuration: inout ServerConfiguration) throws {
        func fail(_ expected: String) -> ConfigurationError {
            ConfigurationError("\(setting.source): \(setting.key) must be \(expected), got \"\(setting.value)\"")
        }
        func integer(atLeast minimum: Int) throws -> Int {
            guard let value = Int(setting.value), value >= minimum else { throw fail("an integer ≥ \(minimum)") }
            return value
        }
        /// An origin (`PublicURL`), its problem named with the key.
        func publicURL(_ text: String) throws -> PublicURL {
            do {
                return try PublicURL(text)
            } catch {
                throw ConfigurationError("\(setting.source): \(setting.key): \(error.detail ?? "not an origin")")
            }
        }
        func boolean() throws -> Bool {
            switch setting.value {
            case "true": return true
            case "false": return false
            default: throw fail("true or false")
            }
        }
        switch setting.key {
        case "listen":
            guard let address = ListenAddress(parsing: setting.value) else { throw fail("HOST:PORT") }
            configuration.listen = address
        case "dataDir":
            guard !setting.value.isEmpty else { throw fail("a directory path") }
            configuration.dataDir = setting.value
        case "logLevel":
            guard let level = ServerConfiguration.LogLevel(rawValue: setting.value) else {
                throw fail("one of \(ServerConfiguration.LogLevel.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            configuration.logLevel = level
        case "threads": configuration.threads = try integer(atLeast: 0)
        case "server.trustedProxies":
            let entries = setting.value.split(separator: ",").map { $0.trimmed() }.filter { !$0.isEmpty }
            configuration.trustedProxies = TrustedProxies(try entries.map { entry in
                guard let network = TrustedProxies.Network(cidr: entry) else {
                    throw ConfigurationError(
                        "\(setting.source): \(setting.key): \"\(entry)\" is not an IPv4 or IPv6 CIDR "
                            + "(like 10.0.0.0/8 or fd00::/8; a bare address is /32 or /128)")
                }
                return network
            })
        case "server.publicURL":
            configuration.publicURL = setting.value.isEmpty ? nil : try publicURL(setting.value)
        case "connect.sessionSeconds": configuration.connectSessionSeconds = try integer(atLeast: 10)
        case "connect.maxWaitSeconds": configuration.connectMaxWaitSeconds = try integer(atLeast: 1)
        case "connect.maxWaitsPerClient": configuration.connectMaxWaitsPerClient = try integer(atLeast: 1)
        case "connect.returnToOrigins":
            let entries = setting.value.split(separator: ",").map { $0.trimmed() }.filter { !$0.isEmpty }
            configuration.connectReturnToOrigins = try entries.map { try publicURL($0) }
        case "limits.maxBodyBytes": configuration.maxBodyBytes = try integer(atLeast: 1)
        case "limits.maxConnections": configuration.maxConnections = try integer(atLeast: 1)
        case "limits.maxConnectionsPerAddress": configuration.maxConnectionsPerAddress = try integer(atLeast: 0)
        case "limits.connectionMemoryBytes": configuration.connectionMemoryBytes = try integer(atLeast: 8192)
        case "limits.idleTimeoutSeconds": configuration.idleTimeoutSeconds = try integer(atLeast: 1)
        case "limits.headerTimeoutSeconds": configuration.headerTimeoutSeconds = try integer(atLeast: 1)
        case "limits.shutdownGraceSeconds": configuration.shutdownGraceSeconds = try integer(atLeast: 0)
        case "limits.maxQueryParameters": configuration.maxQueryParameters = try integer(atLeast: 0)
        case "limits.authFailuresPerMinute": configuration.authFailuresPerMinute = try integer(atLeast: 0)
        case "limits.authFailureAddresses": configuration.authFailureAddresses = try integer(atLeast: 1)
        case "limits.maxAnswerBytes": configuration.maxAnswerBytes = try integer(atLeast: 65536)
        case "limits.loginFailuresPerRolePerMinute": configuration.loginFailuresPerRolePerMinute = try integer(atLeast: 0)
        case "login.jwksStaleSeconds": configuration.jwksStaleSeconds = try integer(atLeast: 0)
        case "vault.secretMountAlias": configuration.vaultSecretMountAlias = try boolean()
        case "quota.items": configuration.quotaItems = try integer(atLeast: 0)
        case "quota.secretBytes": configuration.quotaSecretBytes = try integer(atLeast: 0)
        case "quota.attributeBytes": configuration.quotaAttributeBytes = try integer(atLeast: 0)
        case "tls.certFile": configuration.tlsCertFile = setting.value
        case "tls.keyFile": configuration.tlsKeyFile = setting.value
        case "tls.priorities":
            guard !setting.value.isEmpty else { throw fail("a GnuTLS priority string") }
            configuration.tlsPriorities = setting.value
        case "tls.allowPlaintext": configuration.tlsAllowPlaintext = try boolean()
        case "backup.interval": configuration.backupInterval = try integer(atLeast: 0)
        case "backup.directory": configuration.backupDirectory = setting.value
        case "backup.keep": configuration.backupKeep = try integer(atLeast: 1)
        case "audit.enabled": configuration.auditEnabled = try boolean()
        case "audit.file": configuration.auditFile = setting.value
        case "audit.failClosed": configuration.auditFailClosed = try boolean()
        case "audit.fsync": configuration.auditFsync = try boolean()
        case "audit.unauthenticatedLinesPerMinute":
            configuration.auditUnauthenticatedLinesPerMinute = try integer(atLeast: 0)
        case "refresh.caFile": configuration.refreshCAFile = setting.value
        case "refresh.timeoutSeconds": configuration.refreshTimeoutSeconds = try integer(atLeast: 1)
        case "refresh.waitSeconds": configuration.refreshWaitSeconds = try integer(atLeast: 1)
        case "refresh.intervalSeconds": configuration.refreshIntervalSeconds = try integer(atLeast: 0)
        case "webhooks.retrySeconds": configuration.webhookRetrySeconds = try integer(atLeast: 0)
        case "storage.backend":
            guard let backend = ServerConfiguration.StorageBackend(rawValue: setting.value) else {
                throw fail("one of \(ServerConfiguration.StorageBackend.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            configuration.storageBackend = backend
        case "storage.postgresql.url": configuration.postgresqlURL = setting.value
        case "storage.postgresql.connectTimeoutSeconds": configuration.postgresqlConnectTimeoutSeconds = try integer(atLeast: 1)
        case "storage.postgresql.statementTimeoutSeconds":
            configuration.postgresqlStatementTimeoutSeconds = try integer(atLeast: 1)
        case "refresh.concurrency": configuration.refreshConcurrency = try integer(atLeast: 1)
        case "refresh.maxRetryAfterSeconds": configuration.refreshMaxRetryAfterSeconds = try integer(atLeast: 1)
        default:
            throw ConfigurationError("\(setting.source): unknown key \"\(setting.key)\"")
        }
    }
}
