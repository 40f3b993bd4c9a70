import Foundation
import KeychainAPI
public import KeychainConfig
public import KeychainCore
public import KeychainHTTP
public import KeychainRefresh
import KeychainLogin
public import KeychainConnect
public import KeychainStore
public import KeychainPostgreSQL
public import Logging
public import MicroHTTPDServer

/// Connects the libraries: the vault's stores to the HTTP routes, the configuration to the server.
public enum Wiring {
    /// The source the wiring's log lines name: the executable's module, where they were written
    /// before the wiring moved into this library (the start log stays as it was).
    public static let logSource = "keychaind"

    public static func application(
        vault: Vault, logger: Logger, requestLog: (any PreformattedLog)? = nil, observe: Observe? = nil,
        configuration: ServerConfiguration = ServerConfiguration(), refresher: TokenRefresher? = nil,
        connectWaiters: ConnectWaiters? = nil, deliverer: WebhookDeliverer? = nil
    ) -> KeychainApplication {
        let service = KeychainService(
            store: vault.items, certificateParser: X509CertificateParser(), cursors: pageCursors(vault),
            maxPageBytes: ItemListAnswer.pageBytes(forAnswerBytes: configuration.maxAnswerBytes),
            kvDataCheck: KVRequest.checkData)
        let tokens = TokenService(items: service, metadataFormat: TokenMetadataJSON(), refresher: refresher)
        var router = Router()
        router.addServiceRoutes(isLocked: { vault.isLocked }, storage: healthOfStorage(vault))
        router.addItemRoutes(service: service)
        router.addTokenRoutes(tokens: tokens, refresher: refresher)
        router.addProviderRoutes(providers: vault.providers, refreshSettings: refreshSettings(vault, service: service))
        router.addClientRoutes(
            clients: vault.clients, tokens: vault.tokenIssuer, requireUpgradedCluster: { try vault.requireUpgradedCluster() })
        router.addAuthTokenRoutes(clients: vault.clients)
        router.addSysRoutes(
            isLocked: { vault.isLocked }, storage: { vault.storage }, clusterID: vault.clusterID,
            secretMountAlias: configuration.vaultSecretMountAlias)
        let login = workloadLogin(vault: vault, configuration: configuration, logger: logger)
        router.addLoginRoutes(
            login: login, clients: vault.clients, roleFailures: loginFailuresPerRole(configuration),
            requireUpgradedCluster: { try vault.requireUpgradedCluster() })
        router.addVaultRoutes(vault: vault)
        router.addConnectRoutes(
            flow: connectFlow(
                vault: vault, configuration: configuration, logger: logger,
                waiters: connectWaiters ?? Self.connectWaiters(vault: vault, configuration: configuration, logger: logger)))
        router.addWebhookRoutes(webhooks: vault.webhooks)
        let limiter = authFailureLimiter(configuration)
        let unauthenticatedLines = unauthenticatedAuditLines(configuration)
        if let observe {
            var sources = observe.sources(
                vault: vault, isLocked: { vault.isLocked }, lastBackup: { vault.status.lastBackup },
                refresh: refreshStatistics(refresher))
            if let deliverer { sources.webhooks = { deliverer.statistics() } }
            if let limiter { sources.authThrottled = { limiter.throttledFailures } }
            if let unauthenticatedLines { sources.auditUnauthenticatedSkipped = { unauthenticatedLines.refusals } }
            sources.logins = { login.metrics.snapshot().map { ($0.role, $0.outcome.rawValue, $0.count) } }
            sources.staleKeySetServes = { login.staleKeySetServes }
            router.addMetricsRoute(metrics: observe.metrics, sources: sources)
        }
        // Last: a mount is any first segment, so every route with a literal one comes first.
        router.addKVRoutes(
            kv: KVService(store: vault.items), tokens: tokens,
            secretMountAlias: configuration.vaultSecretMountAlias, maxAnswerBytes: configuration.maxAnswerBytes)
        return KeychainApplication(
            router: router,
            authenticator: Authenticator(clients: vault.clients, tokens: vault.tokenIssuer),
            logger: logger, requestLog: requestLog, auditor: observe?.auditor, metrics: observe?.metrics,
            authFailureLimiter: limiter, unauthenticatedAuditLines: unauthenticatedLines)
    }

    /// Workload login over the vault's roles and tokens; issuers' documents fetched as token
    /// endpoints are called (`refresh.caFile`, https verified, plain http to loopback only), at
    /// most 256 KiB in 5 s.
    static func workloadLogin(vault: Vault, configuration: ServerConfiguration, logger: Logger) -> WorkloadLogin {
        let client = TokenEndpointClient(
            settings: OutboundHTTPSettings(
                connectTimeoutMilliseconds: 3_000, timeoutMilliseconds: 5_000, maximumAnswerBytes: 256 * 1024,
                caFile: configuration.refreshCAFile.isEmpty ? nil : configuration.refreshCAFile))
        return WorkloadLogin(
            roles: vault.loginRoles, clients: vault.clients, issuer: vault.tokenIssuer, fetcher: IssuerFetcher(client: client),
            staleSeconds: configuration.jwksStaleSeconds, logger: logger)
    }

    /// The connect flow over the vault's sessions, providers and token items (`server.publicURL`,
    /// `connect.*`); its code exchanges go out under the token endpoints' rules (`refresh.caFile`,
    /// `refresh.timeoutSeconds`).
    static func connectFlow(
        vault: Vault, configuration: ServerConfiguration, logger: Logger, waiters: ConnectWaiters
    ) -> ConnectFlow {
        let service = KeychainService(
            store: vault.items, certificateParser: X509CertificateParser(), cursors: pageCursors(vault))
        let settings = RefreshSettingStore(
            tokens: TokenService(items: service, metadataFormat: TokenMetadataJSON()), providers: vault.providers,
            format: RefreshRecordJSON())
        let outbound = OutboundHTTPSettings(
            timeoutMilliseconds: configuration.refreshTimeoutSeconds * 1000,
            caFile: configuration.refreshCAFile.isEmpty ? nil : configuration.refreshCAFile)
        return ConnectFlow(
            sessions: vault.connectSessions, providers: vault.providers, refreshSettings: settings,
            endpoint: TokenEndpointClient(settings: outbound), waiters: waiters,
            settings: ConnectFlow.Settings(
                publicURL: configuration.publicURL, sessionSeconds: configuration.connectSessionSeconds,
                maxWaitSeconds: configuration.connectMaxWaitSeconds, returnToOrigins: configuration.connectReturnToOrigins),
            logger: logger)
    }

    /// The connect waits of this node (`connect.maxWaitsPerClient`); `start` it to follow sessions
    /// that end on other nodes.
    public static func connectWaiters(vault: Vault, configuration: ServerConfiguration, logger: Logger) -> ConnectWaiters {
        ConnectWaiters(store: vault.connectSessions, maxPerClient: configuration.connectMaxWaitsPerClient, logger: logger)
    }

    /// `limits.loginFailuresPerRolePerMinute` = 0 turns the per-role budget off.
    static func loginFailuresPerRole(_ configuration: ServerConfiguration) -> AddressBudget? {
        guard configuration.loginFailuresPerRolePerMinute > 0 else { return nil }
        return AddressBudget(perMinute: configuration.loginFailuresPerRolePerMinute, maxAddresses: 10_000)
    }

    /// The refresh settings over the vault's items, as the refresher keeps them.
    static func refreshSettings(_ vault: Vault, service: KeychainService) -> RefreshSettingStore {
        RefreshSettingStore(
            tokens: TokenService(items: service, metadataFormat: TokenMetadataJSON()), providers: vault.providers,
            format: RefreshRecordJSON())
    }

    /// Page cursors sealed under a key derived from the master key, as the audit tags are.
    private static func pageCursors(_ vault: Vault) -> PageCursorSeal {
        let keyring = vault.keyring
        return PageCursorSeal { keyring.derivedMAC(label: PageCursorSeal.keyLabel, $0, into: $1) }
    }

    /// Health's storage part: on PostgreSQL, whether the database answers; nothing on SQLite.
    private static func healthOfStorage(_ vault: Vault) -> (@Sendable () -> StorageHealth)? {
        guard vault.storage.backend != .sqlite else { return nil }
        return { vault.storage }
    }

    /// How this node reaches PostgreSQL (`storage.postgresql.*`).
    public static func postgresql(_ configuration: ServerConfiguration) -> PGSettings {
        PGSettings(
            url: configuration.postgresqlURL, connectTimeoutSeconds: configuration.postgresqlConnectTimeoutSeconds,
            statementTimeoutSeconds: configuration.postgresqlStatementTimeoutSeconds)
    }

    /// `quota.items`, `quota.secretBytes` and `quota.attributeBytes`; 0 is no bound.
    public static func groupQuota(_ configuration: ServerConfiguration) -> GroupQuota {
        GroupQuota(
            items: configuration.quotaItems > 0 ? configuration.quotaItems : nil,
            secretBytes: configuration.quotaSecretBytes > 0 ? configuration.quotaSecretBytes : nil,
            attributeBytes: configuration.quotaAttributeBytes > 0 ? configuration.quotaAttributeBytes : nil)
    }

    /// Server-side token refresh (`refresh.*`): the token endpoint client and the refresher over
    /// the vault's items. Each exchange's outcome is logged (service, outcome, state, the
    /// provider's error; never a token or secret) and audited (the service tagged, the state);
    /// one whose outcome was discarded (its setting or tokens replaced meanwhile) says so.
    public static func refresher(
        vault: Vault, configuration: ServerConfiguration, logger: Logger, auditor: Auditor? = nil
    ) -> TokenRefresher {
        let service = KeychainService(
            store: vault.items, certificateParser: X509CertificateParser(), cursors: pageCursors(vault))
        let store = refreshSettings(vault, service: service)
        let outbound = OutboundHTTPSettings(
            timeoutMilliseconds: configuration.refreshTimeoutSeconds * 1000,
            caFile: configuration.refreshCAFile.isEmpty ? nil : configuration.refreshCAFile)
        // Every exchange asks the provider app's hold (Retry-After) before it calls.
        let endpoint = ProviderHoldingEndpoint(
            TokenEndpointClient(settings: outbound), holds: vault.providerHolds,
            maximumHold: TimeInterval(configuration.refreshMaxRetryAfterSeconds))
        return TokenRefresher(
            store: store, endpoint: endpoint,
            waitLimit: TimeInterval(configuration.refreshWaitSeconds), exchangeLock: vault.refreshExchangeLock,
            report: { key, outcome, state in
            var metadata: Logger.Metadata = [
                "service": "\(key.service)", "accessGroup": "\(key.group)", "outcome": "\(outcome.rawValue)",
                "state": "\(state?.condition.rawValue ?? "none")",
            ]
            if let user = key.user { metadata["user"] = "\(user)" }
            if let state { metadata["failures"] = "\(state.failures)" }
            if let error = state?.lastError, outcome != .discarded { metadata["error"] = "\(error)" }
            let level: Logger.Level =
                switch outcome {
                case .refreshed: .info
                case .discarded: .notice
                case .failed, .needsReauth: .warning
                }
            logger.log(level: level, "token refresh", metadata: metadata, source: logSource)
            auditor?.recordRefresh(key, outcome: outcome, state: state?.condition)
        })
    }

    /// Webhook delivery (`webhooks.retrySeconds`), through the token endpoints' libcurl client
    /// and its rules (`refresh.caFile`, https verified, plain http to loopback only). Each
    /// attempt's outcome is logged with the webhook's name and the delivery's id (never the URL,
    /// the key or the body).
    public static func webhookDeliverer(vault: Vault, configuration: ServerConfiguration, logger: Logger) -> WebhookDeliverer {
        let outbound = OutboundHTTPSettings(
            timeoutMilliseconds: configuration.refreshTimeoutSeconds * 1000,
            caFile: configuration.refreshCAFile.isEmpty ? nil : configuration.refreshCAFile)
        return WebhookDeliverer(
            store: vault.webhooks, client: TokenEndpointClient(settings: outbound),
            retryFor: TimeInterval(configuration.webhookRetrySeconds),
            report: { delivery, outcome, failure in
                var metadata: Logger.Metadata = [
                    "webhook": "\(delivery.webhook)", "webhookId": "\(delivery.id)", "type": "\(delivery.event.kind.rawValue)",
                    "attempt": "\(delivery.attempts)", "outcome": "\(outcome.rawValue)",
                ]
                if let failure { metadata["reason"] = "\(failure)" }
                let level: Logger.Level =
                    switch outcome {
                    case .delivered: .info
                    case .retried: .warning
                    case .givenUp: .error
                    }
                logger.log(level: level, "webhook delivery", metadata: metadata, source: logSource)
            })
    }

    private static func refreshStatistics(_ refresher: TokenRefresher?) -> (@Sendable () -> RefreshStatistics)? {
        guard let refresher else { return nil }
        return { refresher.statistics() }
    }

    /// `limits.authFailuresPerMinute` = 0 turns the limit off.
    public static func authFailureLimiter(_ configuration: ServerConfiguration) -> AuthFailureLimiter? {
        guard configuration.authFailuresPerMinute > 0 else { return nil }
        return AuthFailureLimiter(
            failuresPerMinute: configuration.authFailuresPerMinute, maxAddresses: configuration.authFailureAddresses)
    }

    /// `audit.unauthenticatedLinesPerMinute` = 0 writes every line; the addresses tracked are the
    /// failed-auth limit's (`limits.authFailureAddresses`).
    public static func unauthenticatedAuditLines(_ configuration: ServerConfiguration) -> AddressBudget? {
        guard configuration.auditUnauthenticatedLinesPerMinute > 0 else { return nil }
        return AddressBudget(
            perMinute: configuration.auditUnauthenticatedLinesPerMinute, maxAddresses: configuration.authFailureAddresses)
    }

    /// libmicrohttpd's worker threads on this machine; the vault keeps a reader for each.
    public static func workerThreads(_ configuration: ServerConfiguration) -> Int {
        configuration.workerThreads(processors: ProcessInfo.processInfo.activeProcessorCount)
    }

    public static func serverSettings(_ configuration: ServerConfiguration) throws -> ServerSettings {
        var tls: ServerSettings.TLSMaterial?
        if !configuration.tlsCertFile.isEmpty {
            guard MicroHTTPDServer.supportsTLS else {
                throw ConfigurationError("tls: this libmicrohttpd was built without TLS support")
            }
            try Observe.checkTLSKeyFile(configuration.tlsKeyFile)
            tls = ServerSettings.TLSMaterial(
                certificatePEM: try readText(configuration.tlsCertFile, key: "tls.certFile"),
                keyPEM: try readText(configuration.tlsKeyFile, key: "tls.keyFile"),
                priorities: configuration.tlsPriorities)
        }
        return ServerSettings(
            host: configuration.listen.host, port: configuration.listen.port,
            threads: workerThreads(configuration),
            maxBodyBytes: configuration.maxBodyBytes, maxConnections: configuration.maxConnections,
            maxConnectionsPerAddress: configuration.maxConnectionsPerAddress,
            connectionMemoryBytes: configuration.connectionMemoryBytes,
            idleTimeoutSeconds: configuration.idleTimeoutSeconds,
            headerTimeoutSeconds: configuration.headerTimeoutSeconds,
            shutdownGraceSeconds: configuration.shutdownGraceSeconds,
            maxQueryParameters: configuration.maxQueryParameters, tls: tls,
            trustedProxies: configuration.trustedProxies)
    }

    private static func readText(_ path: String, key: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else { throw ConfigurationError("\(key): cannot read \(path)") }
        return text
    }
}
