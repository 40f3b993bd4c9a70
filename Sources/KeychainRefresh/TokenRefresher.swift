public import Foundation
import KeychainConcurrency
public import KeychainCore
import Synchronization

/// Keeps tokens fresh (docs/api.md, "Keeping tokens fresh"): decides when a service's tokens are due,
/// runs one exchange per setting however many callers find them due at once (the others wait
/// for it, at most `waitLimit`), stores the new tokens and state in one transaction before
/// anyone is answered, and moves the state between ok, failing (jittered backoff) and
/// needsReauth (no more calls).
public final class TokenRefresher: TokenRefreshing, Sendable {
    public let store: RefreshSettingStore
    let endpoint: any TokenEndpoint
    let waitLimit: TimeInterval
    let backoff: RefreshBackoff
    public let metrics: RefreshMetrics
    let clock: @Sendable () -> Date
    /// Told of every exchange's outcome and the state it left (nil: no setting is stored any
    /// more), for the log and the audit log; never given a secret.
    let report: @Sendable (RefreshKey, RefreshStatistics.Outcome, RefreshState?) -> Void
    /// Taken around each exchange when several nodes share the vault (PostgreSQL), so that one
    /// node exchanges a setting's refresh token at a time; nil with one node.
    let exchangeLock: (any RefreshExchangeLock)?

    /// The exchange running for each setting that has one (the single flight).
    private let flights = Mutex<[RefreshKey: PendingExchange]>([:])
    /// Deleted refresh tokens on their way to their providers' revocation endpoints.
    private let revocations: RevocationQueue

    public init(
        store: RefreshSettingStore, endpoint: any TokenEndpoint, waitLimit: TimeInterval = 15,
        backoff: RefreshBackoff = RefreshBackoff(), metrics: RefreshMetrics = RefreshMetrics(),
        clock: @escaping @Sendable () -> Date = { Date() }, exchangeLock: (any RefreshExchangeLock)? = nil,
        report: @escaping @Sendable (RefreshKey, RefreshStatistics.Outcome, RefreshState?) -> Void = { _, _, _ in }
    ) {
        self.exchangeLock = exchangeLock
        self.store = store
        self.endpoint = endpoint
        self.waitLimit = waitLimit
        self.backoff = backoff
        self.metrics = metrics
        self.clock = clock
        self.report = report
        revocations = RevocationQueue(endpoint: endpoint, metrics: metrics)
    }

    // MARK: - The fetch's questions (TokenRefreshing)

    public func refresh(_ naming: TokenNaming, storedGroup: String?, client: Client, wait: ExchangeWait) throws -> Bool {
        let groups = storedGroup.map { [$0] } ?? naming.accessGroup.map { [$0] } ?? client.accessGroups
        var found: RefreshRecord?
        for group in groups {
            found = try store.record(RefreshKey(service: naming.service, user: naming.user, group: group))
            if found != nil { break }
        }
        guard let record = found else { return false }
        switch wait {
        case .block:
            try flight(record.key, force: false)
        case .handOff:
            // Only when there is something to wait for: a setting that will not call its
            // provider (needsReauth, or failing within its backoff) is answered from what is stored.
            if let running = flights.withLock({ $0[record.key] }) {
                throw ExchangeInProgress(exchange: running, waitLimit: waitLimit)
            }
            if !record.state.holdsOffCalls(at: clock()) {
                throw ExchangeInProgress(exchange: startFlight(record.key, force: false), waitLimit: waitLimit)
            }
        case .stored:
            break
        }
        let access = try store.access(record.key)
        if access.stored, access.expiresAt.map({ $0 > clock() }) ?? true { return true }
        let state = try store.record(record.key)?.state ?? record.state
        let running = flights.withLock { $0[record.key] } != nil ? ", an exchange is still in progress" : ""
        throw KeychainError(
            .serviceNotAvailable,
            "no valid access token for \(record.key): the refresh is \(state.condition.rawValue)\(running)"
                + (state.lastError.map { " (\($0))" } ?? ""))
    }

    /// Stored only over the setting and tokens it read (as an exchange's outcome is), so that of
    /// two PUTs at once one moves the state and fires `recovered`; the other finds it `ok`.
    public func tokensSaved(_ naming: TokenNaming, group: String) throws {
        let key = RefreshKey(service: naming.service, user: naming.user, group: group)
        guard let start = try store.start(key), start.record.state.condition != .ok || start.record.state.failures > 0 else {
            return
        }
        var record = start.record
        record.state = RefreshState(condition: .ok, lastRefreshAt: record.state.lastRefreshAt)
        _ = try store.save(record, startedFrom: start, recording: Self.events(key, from: start.record.state, to: record.state, at: clock()))
    }

    public func refreshBefore(_ naming: TokenNaming, group: String) throws -> Int? {
        try store.record(RefreshKey(service: naming.service, user: naming.user, group: group))?.setting.refreshBefore
    }

    // MARK: - The refresh routes' operations

    /// Stores (or replaces) a setting; its state starts afresh, due `refreshBefore` ahead of the
    /// stored token's expiry (at once when none is stored).
    public func configure(_ setting: RefreshSetting, for key: RefreshKey) throws -> RefreshRecord {
        let access = try store.access(key)
        let next = access.expiresAt.map { $0.addingTimeInterval(-Double(setting.refreshBefore)) } ?? (access.stored ? nil : clock())
        let record = RefreshRecord(key: key, setting: setting, state: RefreshState(nextRefreshAt: next))
        try store.save(record)
        try store.markAccess(key, refreshBefore: setting.refreshBefore)
        return record
    }

    /// Refreshes now whatever the state (a setting in needsReauth tries again) and answers the
    /// record as it is afterwards.
    public func refreshNow(_ key: RefreshKey, wait: ExchangeWait) throws -> RefreshRecord {
        guard try store.record(key) != nil else { throw Self.noSetting(key) }
        switch wait {
        case .block: try flight(key, force: true)
        case .handOff: throw ExchangeInProgress(exchange: startFlight(key, force: true), waitLimit: waitLimit)
        case .stored: break
        }
        guard let record = try store.record(key) else { throw Self.noSetting(key) }
        return record
    }

    public func record(_ key: RefreshKey) throws -> RefreshRecord? {
        try store.record(key)
    }

    /// The refresh tokens a delete may remove that are to be revoked are read first (as
    /// keychaind: a client is not shown them), in every group the delete reaches; after the
    /// delete, each that is no longer stored is queued for revocation. Reading them never fails
    /// the delete: a setting or token that cannot be read is not revoked for.
    public func deleteRevoking(_ naming: TokenNaming, client: Client, _ delete: () throws -> Int) throws -> Int {
        let groups = naming.accessGroup.map { [$0] } ?? client.accessGroups
        let revocable = groups.compactMap { group -> (RefreshKey, OAuthProvider, SecretBytes)? in
            let key = RefreshKey(service: naming.service, user: naming.user, group: group)
            guard let record = try? store.record(key), let name = record.setting.provider,
                let provider = try? store.providers.provider(named: name), provider.revocationEndpoint != nil,
                let refreshToken = try? store.refreshToken(key)
            else { return nil }
            return (key, provider, refreshToken)
        }
        let deleted = try delete()
        for (key, provider, refreshToken) in revocable {
            let removed: Bool
            do { removed = try store.refreshToken(key) != refreshToken } catch { removed = false }
            if removed { revocations.revoke(refreshToken, at: provider) }
        }
        return deleted
    }

    public func provider(named name: String) throws -> OAuthProvider? {
        try store.providers.provider(named: name)
    }

    public func removeSetting(_ key: RefreshKey) throws -> Int {
        let removed = try store.delete(key)
        try store.markAccess(key, refreshBefore: nil)
        return removed
    }

    static func noSetting(_ key: RefreshKey) -> KeychainError {
        KeychainError.itemNotFound("no refresh setting for \(key)")
    }

    /// `/metrics`'s view: exchanges so far and the settings in each state.
    public func statistics() -> RefreshStatistics {
        var settings: [RefreshState.Condition: Int] = [:]
        for record in (try? store.records()) ?? [] { settings[record.state.condition, default: 0] += 1 }
        return metrics.statistics(settings: settings)
    }

    // MARK: - Background

    /// Runs the exchange of every setting that is due now, up to `concurrency` at once (each
    /// through its single flight, so one service never has two), until `stop` says so: `ok`
    /// ones whose `nextRefreshAt` has come, `failing` ones whose backoff has ended. A provider
    /// that answers slowly then holds up one exchange, not the whole round. Errors (a locked
    /// vault, storage) end the round; the next round tries again.
    public func refreshDue(concurrency: Int = 1, stop: @escaping @Sendable () -> Bool = { false }) {
        guard let records = try? store.records() else { return }
        let now = clock()
        let due = records.filter { record in
            record.state.condition != .needsReauth && record.state.nextRefreshAt.map { $0 <= now } == true
        }
        let round = DueRound(due.map(\.key))
        let work: @Sendable () -> Void = { [self] in
            while !stop(), let key = round.next() {
                do {
                    try flight(key, force: false)
                } catch {
                    round.end()
                }
            }
        }
        // The calling thread is one of the workers; the others live for this round only.
        let helpers = DispatchGroup()
        for _ in 1..<max(1, min(concurrency, due.count)) {
            helpers.enter()
            let thread = Thread {
                work()
                helpers.leave()
            }
            thread.name = "keychaind-refresh"
            thread.start()
        }
        work()
        helpers.wait()
    }

    // MARK: - Single flight

    /// Runs the exchange for `key` on this thread unless one is running; then waits for that one
    /// instead (at most `waitLimit`). `force`: exchange even when the tokens are not due.
    func flight(_ key: RefreshKey, force: Bool) throws {
        let (pending, isNew) = claimFlight(key)
        guard isNew else {
            pending.wait(upTo: waitLimit)
            return
        }
        try run(pending, key, force: force)
    }

    /// The exchange running for `key`, or one started now on a thread of its own, so that no
    /// caller's thread waits for the provider. What it stores (or why it failed) is read back
    /// from the store by whoever waited; an error of the store itself ends it unreported, and
    /// the next fetch or background round tries again.
    func startFlight(_ key: RefreshKey, force: Bool) -> PendingExchange {
        let (pending, isNew) = claimFlight(key)
        guard isNew else { return pending }
        let thread = Thread { [self] in try? run(pending, key, force: force) }
        thread.name = "keychaind-exchange"
        thread.start()
        return pending
    }

    /// The running exchange for `key`, or a new one (`isNew`) that the caller must run.
    private func claimFlight(_ key: RefreshKey) -> (PendingExchange, isNew: Bool) {
        flights.withLock { flights in
            if let running = flights[key] { return (running, false) }
            let pending = PendingExchange()
            flights[key] = pending
            return (pending, true)
        }
    }

    /// Runs the claimed exchange, then lets it go and tells its waiters.
    private func run(_ pending: PendingExchange, _ key: RefreshKey, force: Bool) throws {
        defer {
            flights.withLock { $0[key] = nil }
            pending.finish()
        }
        guard let exchangeLock else { return try exchange(key, force: force) }
        // Another node's exchange holds it: once it is done, this one reads what that stored
        // (fresh tokens are not due) and calls no one.
        _ = try exchangeLock.withLock(key, waitingUpTo: waitLimit) { try exchange(key, force: force) }
    }

    /// One exchange and its outcome stored, unless (without `force`) the tokens are not due or
    /// the state says not to call: needsReauth, or failing within its backoff. The outcome is
    /// stored only if the setting and refresh token it started from are still the ones stored;
    /// otherwise (replaced or removed meanwhile by an admin, or new tokens stored) it is
    /// discarded, and callers read what is stored now. An `invalid_grant` for a refresh token
    /// replaced meanwhile starts over from the newer tokens (`LostRotation`, `followed` times so far).
    private func exchange(_ key: RefreshKey, force: Bool, followed: Int = 0) throws {
        guard let start = try store.start(key) else { return }
        var record = start.record
        let now = clock()
        if !force {
            switch record.state.condition {
            case .needsReauth:
                return
            case .failing:
                if let next = record.state.nextRefreshAt, next > now { return }
            case .ok:
                let access = try store.access(key)
                if access.stored {
                    let due = access.expiresAt?.addingTimeInterval(-Double(record.setting.refreshBefore))
                    if due.map({ $0 > now }) ?? true {
                        // Not due (new tokens were stored since): the background looks again then.
                        if record.state.nextRefreshAt != due {
                            record.state.nextRefreshAt = due
                            _ = try store.save(record, startedFrom: start)
                        }
                        return
                    }
                }
            }
        }
        let refreshToken = record.setting.grant == .refreshToken ? start.refreshToken : nil
        let started = DispatchTime.now().uptimeNanoseconds
        var outcome: RefreshStatistics.Outcome
        do {
            let grant = try endpoint.exchange(record.setting, refreshToken: refreshToken)
            let finished = clock()
            let expiresAt = grant.expiresIn.map { finished.addingTimeInterval(TimeInterval($0)).truncatedToMilliseconds }
            record.state = RefreshState(
                condition: .ok, lastRefreshAt: finished.truncatedToMilliseconds,
                nextRefreshAt: expiresAt?.addingTimeInterval(-Double(record.setting.refreshBefore)))
            let events = Self.events(key, from: start.record.state, to: record.state, at: finished)
            outcome =
                try store.store(grant, expiresAt: expiresAt, record: record, startedFrom: start, recording: events)
                ? .refreshed : .discarded
        } catch let failure as TokenExchangeFailure {
            if followed < LostRotation.followLimit, try LostRotation.refusedReplacedToken(failure, from: start, in: store) {
                metrics.record(.discarded, nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
                report(key, .discarded, try store.record(key)?.state)
                // Not forced: newer tokens whose access token is valid are served as they are.
                return try exchange(key, force: false, followed: followed + 1)
            }
            let finished = clock()
            record.state.failures += 1
            record.state.lastError = Self.explain(failure, grant: record.setting.grant)
            if failure.needsReauth {
                record.state.condition = .needsReauth
                record.state.nextRefreshAt = nil
                outcome = .needsReauth
            } else {
                record.state.condition = .failing
                // A provider's hold (Retry-After) says when; other failures back off.
                record.state.nextRefreshAt = failure.notBefore
                    ?? finished.addingTimeInterval(backoff.delay(afterFailures: record.state.failures)).truncatedToMilliseconds
                outcome = .failed
            }
            let events = Self.events(key, from: start.record.state, to: record.state, at: finished)
            if try !store.save(record, startedFrom: start, recording: events) { outcome = .discarded }
        }
        metrics.record(outcome, nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
        report(key, outcome, outcome == .discarded ? try store.record(key)?.state : record.state)
    }

    /// The webhook event a move between states fires, stored with the new state (docs/api.md,
    /// "Webhooks": on transitions, never per retry).
    static func events(_ key: RefreshKey, from old: RefreshState, to new: RefreshState, at now: Date) -> [WebhookEvent] {
        WebhookEvent.transition(of: key, from: old, to: new, at: now).map { [$0] } ?? []
    }

    /// What `lastError` says: the provider's code and description; for a refused refresh token,
    /// also what a lost rotation looks like, so that an operator knows what to do.
    static func explain(_ failure: TokenExchangeFailure, grant: RefreshSetting.Grant) -> String {
        guard case .refused("invalid_grant", _) = failure, grant == .refreshToken else { return failure.description }
        return failure.description
            + " (the stored refresh token was refused: store new tokens with PUT /v1/tokens/{service})"
    }
}

/// The due settings of one background round, handed out one at a time to its workers.
private final class DueRound: Sendable {
    private let queue: PThreadLocked<(keys: [RefreshKey], next: Int)>

    init(_ keys: [RefreshKey]) {
        queue = PThreadLocked((keys, 0))
    }

    /// The next setting to refresh; nil once every one was handed out or the round ended.
    func next() -> RefreshKey? {
        queue.withLock { queue in
            guard queue.next < queue.keys.count else { return nil }
            defer { queue.next += 1 }
            return queue.keys[queue.next]
        }
    }

    /// Hands out no more settings (the store failed: the next round tries again).
    func end() {
        queue.withLock { $0.next = $0.keys.count }
    }
}
