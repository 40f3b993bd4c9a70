public import Foundation
import KeychainAPI
public import KeychainCore

/// What `/metrics` reads at scrape time besides the request counters. Features built elsewhere
/// (lock, backup) hand in closures; nil leaves their family out.
public struct MetricsSources: Sendable {
    /// Items per class (`ItemStore.countByClass()`).
    public var itemCounts: @Sendable () throws -> [ItemClass: Int]
    public var isLocked: @Sendable () -> Bool
    /// The keyring's current term and how many secrets it has sealed.
    public var keyring: (@Sendable () -> (term: UInt32, encryptions: UInt64))?
    /// When the last backup was taken; nil from the closure (no backup yet) gives NaN.
    public var lastBackup: (@Sendable () -> Date?)?
    /// Audit lines that could not be written.
    public var auditWriteFailures: (@Sendable () -> UInt64)?
    /// Failed authentications the failed-auth limit answered 429 (`AuthFailureLimiter`).
    public var authThrottled: (@Sendable () -> UInt64)?
    /// Audit lines of requests without a token left unwritten past their address's budget.
    public var auditUnauthenticatedSkipped: (@Sendable () -> UInt64)?
    /// Workload logins by role and outcome (`success`, `refused`, `too_many_tokens`, ...).
    public var logins: (@Sendable () -> [(role: String, outcome: String, count: UInt64)])?
    /// Logins served from an issuer's last good key set while the issuer could not be reached.
    public var staleKeySetServes: (@Sendable () -> UInt64)?
    /// The background re-encryption after a rotate, nil when none has run since start.
    public var reencryption: (@Sendable () -> ReencryptionProgress?)?
    /// The storage's group commit: commits, the writes they carried, batch sizes.
    public var commits: (@Sendable () -> CommitStatistics)?
    /// Server-side token refresh: exchanges, their latency, settings per state.
    public var refresh: (@Sendable () -> RefreshStatistics)?
    /// Webhook delivery attempts by outcome.
    public var webhooks: (@Sendable () -> WebhookStatistics)?
    /// PostgreSQL: connections open and in use, statement latency, connection failures.
    public var database: (@Sendable () -> DatabaseStatistics)?
    public var clock: @Sendable () -> Date

    public init(
        itemCounts: @escaping @Sendable () throws -> [ItemClass: Int], isLocked: @escaping @Sendable () -> Bool,
        keyring: (@Sendable () -> (term: UInt32, encryptions: UInt64))? = nil,
        lastBackup: (@Sendable () -> Date?)? = nil, auditWriteFailures: (@Sendable () -> UInt64)? = nil,
        reencryption: (@Sendable () -> ReencryptionProgress?)? = nil,
        commits: (@Sendable () -> CommitStatistics)? = nil, clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.itemCounts = itemCounts
        self.isLocked = isLocked
        self.keyring = keyring
        self.lastBackup = lastBackup
        self.auditWriteFailures = auditWriteFailures
        self.reencryption = reencryption
        self.commits = commits
        self.clock = clock
    }
}

extension Router {
    /// `GET /metrics` (admin): Prometheus text exposition format 0.0.4.
    public mutating func addMetricsRoute(metrics: RequestMetrics, sources: MetricsSources) {
        add(.get, "/metrics", access: .admin, audit: .none) { _ in
            var text = PrometheusText()
            text.family("keychaind_build_info", type: "gauge", help: "Always 1; the version is a label.")
            text.sample("keychaind_build_info", labels: [("version", KeychaindVersion.current)], 1.0)
            metrics.render(into: &text)

            let locked = sources.isLocked()
            text.family("keychaind_locked", type: "gauge", help: "1 while the vault is locked, else 0.")
            text.sample("keychaind_locked", locked ? 1.0 : 0.0)

            if let counts = try? sources.itemCounts() {
                text.family("keychaind_items", type: "gauge", help: "Items stored, by class.")
                for itemClass in ItemClass.allCases {
                    text.sample("keychaind_items", labels: [("class", itemClass.rawValue)], UInt64(counts[itemClass] ?? 0))
                }
            }
            if let keyring = sources.keyring?() {
                text.family("keychaind_keyring_term", type: "gauge", help: "The data-key term new secrets are sealed under.")
                text.sample("keychaind_keyring_term", UInt64(keyring.term))
                text.family(
                    "keychaind_keyring_term_encryptions", type: "gauge",
                    help: "Secrets sealed under the current term (a new term starts at 0.9 * 2^32).")
                text.sample("keychaind_keyring_term_encryptions", keyring.encryptions)
            }
            if let lastBackup = sources.lastBackup {
                let age = lastBackup().map { sources.clock().timeIntervalSince($0) } ?? .nan
                text.family("keychaind_backup_age_seconds", type: "gauge", help: "Seconds since the last backup; NaN when none was taken.")
                text.sample("keychaind_backup_age_seconds", age)
            }
            if let progress = sources.reencryption?() {
                text.family(
                    "keychaind_reencryption_secrets", type: "gauge",
                    help: "Background re-encryption after a rotate: secrets under older terms at its start (total) and re-sealed so far (done).")
                text.sample("keychaind_reencryption_secrets", labels: [("kind", "total")], UInt64(progress.total))
                text.sample("keychaind_reencryption_secrets", labels: [("kind", "done")], UInt64(progress.done))
                text.family(
                    "keychaind_reencryption_running", type: "gauge",
                    help: "1 while a background re-encryption runs; its target term is a label.")
                text.sample(
                    "keychaind_reencryption_running", labels: [("term", String(progress.targetTerm))],
                    progress.state == .running ? 1.0 : 0.0)
            }
            if let commits = sources.commits?() { text.commits(commits) }
            if let refresh = sources.refresh?() { text.refresh(refresh) }
            if let webhooks = sources.webhooks?() { text.webhooks(webhooks) }
            if let database = sources.database?() { text.database(database) }
            if let failures = sources.auditWriteFailures {
                text.family("keychaind_audit_write_failures_total", type: "counter", help: "Audit log lines that could not be written.")
                text.sample("keychaind_audit_write_failures_total", failures())
            }
            if let throttled = sources.authThrottled {
                text.family(
                    "keychaind_auth_throttled_total", type: "counter",
                    help: "Failed authentications answered 429 by the failed-auth limit (counted, not audited).")
                text.sample("keychaind_auth_throttled_total", throttled())
            }
            if let skipped = sources.auditUnauthenticatedSkipped {
                text.family(
                    "keychaind_audit_unauthenticated_skipped_total", type: "counter",
                    help: "Audit lines of requests without a token not written, past their address's budget.")
                text.sample("keychaind_audit_unauthenticated_skipped_total", skipped())
            }
            if let logins = sources.logins {
                text.family(
                    "keychaind_logins_total", type: "counter",
                    help: "Workload logins by login role and outcome (role \"\" for names no role has).")
                for login in logins() {
                    text.sample("keychaind_logins_total", labels: [("role", login.role), ("outcome", login.outcome)], login.count)
                }
            }
            if let stale = sources.staleKeySetServes {
                text.family(
                    "keychaind_login_stale_key_sets_total", type: "counter",
                    help: "Logins verified with an issuer's last good key set because the issuer could not be reached.")
                text.sample("keychaind_login_stale_key_sets_total", stale())
            }
            // What exists in the vault, who calls it and how often: no cache may keep it.
            return HTTPResponse(
                status: 200, headers: [("Content-Type", PrometheusText.contentType), ("Cache-Control", "no-store")],
                body: Array(text.text.utf8))
        }
    }
}

extension PrometheusText {
    /// The group commit's families: commits, and how many writes each carried.
    mutating func commits(_ statistics: CommitStatistics) {
        family(
            "keychaind_storage_commits_total", type: "counter",
            help: "Storage transactions committed (or attempted); writes that arrive together share one.")
        sample("keychaind_storage_commits_total", statistics.commits)
        family(
            "keychaind_storage_commit_batch_size", type: "histogram",
            help: "Writes (item adds, updates, deletes, token PUTs) per storage commit.")
        histogram(
            "keychaind_storage_commit_batch_size", bounds: CommitStatistics.batchSizeBounds.map(String.init),
            counts: statistics.commitsByBatchSize, count: statistics.commits, sum: Double(statistics.writes))
        family("keychaind_storage_writes_queued", type: "gauge", help: "Writes waiting for the batch being committed.")
        sample("keychaind_storage_writes_queued", UInt64(statistics.queued))
    }

    /// The PostgreSQL connections' families: use of the connections and statement latency; and
    /// the cluster as this node's last heartbeat saw it (clock skew, live nodes, oldest release).
    mutating func database(_ statistics: DatabaseStatistics) {
        family(
            "keychaind_storage_connections", type: "gauge",
            help: "PostgreSQL connections of this node: open, and in use by a request or job now.")
        sample("keychaind_storage_connections", labels: [("state", "open")], UInt64(max(0, statistics.connectionsOpen)))
        sample("keychaind_storage_connections", labels: [("state", "in_use")], UInt64(max(0, statistics.connectionsInUse)))
        family(
            "keychaind_storage_connection_failures_total", type: "counter",
            help: "PostgreSQL connections that could not be made or were lost.")
        sample("keychaind_storage_connection_failures_total", statistics.connectionFailures)
        family("keychaind_storage_statement_duration_seconds", type: "histogram", help: "PostgreSQL statement latency.")
        histogram(
            "keychaind_storage_statement_duration_seconds", bounds: DatabaseStatistics.latencyBounds.map(PrometheusText.format),
            counts: statistics.statementsByLatency, count: statistics.statements, sum: statistics.statementSeconds)
        family(
            "keychaind_cluster_clock_skew_seconds", type: "gauge",
            help: "The database's clock minus this node's at the last heartbeat; the node warns past 2 s.")
        sample("keychaind_cluster_clock_skew_seconds", statistics.clockSkewSeconds)
        family("keychaind_cluster_nodes", type: "gauge", help: "Nodes whose heartbeat in cluster_nodes is recent, this one included.")
        sample("keychaind_cluster_nodes", UInt64(max(0, statistics.liveNodes)))
        if let release = statistics.oldestLiveRelease {
            family(
                "keychaind_cluster_oldest_release", type: "gauge",
                help: "The oldest release among the nodes whose heartbeat is recent (always 1; the release is the label).")
            sample("keychaind_cluster_oldest_release", labels: [("release", release)], UInt64(1))
        }
    }

    /// `keychaind_webhook_deliveries_total{outcome}`: delivery attempts by outcome.
    mutating func webhooks(_ statistics: WebhookStatistics) {
        family(
            "keychaind_webhook_deliveries_total", type: "counter",
            help: "Webhook delivery attempts, by outcome (delivered, retried, given_up).")
        for outcome in WebhookStatistics.Outcome.allCases {
            sample("keychaind_webhook_deliveries_total", labels: [("outcome", outcome.rawValue)], statistics.attempts[outcome] ?? 0)
        }
    }

    /// `keychaind_token_refresh_total{outcome}`, `keychaind_token_refresh_duration_seconds`,
    /// `keychaind_token_refresh_settings{state}` and `keychaind_token_revocations_total{outcome}`.
    mutating func refresh(_ statistics: RefreshStatistics) {
        family("keychaind_token_refresh_total", type: "counter", help: "Token endpoint exchanges, by outcome.")
        for outcome in RefreshStatistics.Outcome.allCases {
            sample("keychaind_token_refresh_total", labels: [("outcome", outcome.rawValue)], statistics.exchanges[outcome] ?? 0)
        }
        family("keychaind_token_refresh_duration_seconds", type: "histogram", help: "Token endpoint exchange latency.")
        histogram(
            "keychaind_token_refresh_duration_seconds", bounds: RefreshStatistics.latencyBuckets.map(PrometheusText.format),
            counts: statistics.latencyCounts, count: statistics.latencyCounts.reduce(0, +), sum: statistics.latencySum)
        family("keychaind_token_refresh_settings", type: "gauge", help: "Refresh settings, by state.")
        for state in RefreshState.Condition.allCases {
            sample("keychaind_token_refresh_settings", labels: [("state", state.rawValue)], UInt64(statistics.settings[state] ?? 0))
        }
        family(
            "keychaind_token_revocations_total", type: "counter",
            help: "RFC 7009 revocations of deleted refresh tokens at their providers, by outcome.")
        for outcome in RefreshStatistics.RevocationOutcome.allCases {
            sample("keychaind_token_revocations_total", labels: [("outcome", outcome.rawValue)], statistics.revocations[outcome] ?? 0)
        }
    }
}
