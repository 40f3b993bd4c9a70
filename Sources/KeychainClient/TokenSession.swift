import AsyncHTTPClient
import Foundation
import KeychainAPI
import KeychainCore
import NIOCore
import NIOHTTP1
import Synchronization

/// What a client's login session has done, for logs and health checks (never the token).
public struct LoginSessionStatus: Sendable, Equatable {
    /// Logins so far (`POST /v1/auth/jwt/login`), each with the JWT file read afresh.
    public var logins: Int
    /// Renewals so far (`POST /v1/auth/token/renew-self`) that extended the lease.
    public var renewals: Int
    /// Requests answered 401 that were retried once after a new login.
    public var refusedRequests: Int
    /// The current token's accessor (`kca_…`, not a secret); nil before the first login.
    public var accessor: String?
    /// Seconds left of the current lease on this process's monotonic clock (never from the
    /// server's `expiresAt`); nil before the first login or for a token that never expires.
    public var secondsLeft: Double?
}

/// A token and how long it may be presented, counted on the monotonic clock of this process from
/// when the login or renewal was sent (the trip only shortens a lease). Only durations the server
/// states are used, never one of its dates against this machine's wall clock, so clock skew can
/// neither shorten nor stretch a lease:
/// - `issueTTL`: the token's lifetime at issue, `expiresAt − issuedAt` of the login's answer
///   (a renewal without `increment` extends by it);
/// - `cap`: the login's send + (`maxExpiresAt − issuedAt`), the latest any renewal reaches;
/// - `expires`: send + `issueTTL`, never past `cap`, and never less than send + `ttl` (the
///   seconds left the answer states, rounded down, which alone would cut a 2-second lease to 1).
struct Lease: Sendable {
    var token: String
    var accessor: String?
    /// The lease's length from its send; nil: the token never expires.
    var length: Duration?
    var expires: ContinuousClock.Instant?
    /// The latest `expires` a renewal can reach; past it only a new login helps.
    var cap: ContinuousClock.Instant?
    var issueTTL: Duration?

    /// A login's answer (`previous` nil) or a renewal's, asked at `sent`. `token`: the login's
    /// `token`, or the renewed one.
    init(answer json: JSONValue, token: String, sent: ContinuousClock.Instant, renewing previous: Lease? = nil) throws {
        self.token = token
        accessor = json["accessor"]?.stringValue ?? previous?.accessor
        switch json["ttl"] {
        case .integer(let seconds)?:
            guard seconds >= 0 else { throw KeychainError(.decode, "keychaind answered a negative ttl") }
            let stated = Duration.seconds(seconds)
            let expiresAt = json["expiresAt"]?.stringValue.flatMap(RFC3339.parse)
            let issueTTL: Duration
            let cap: ContinuousClock.Instant
            if let previous, let previousTTL = previous.issueTTL, let previousCap = previous.cap {
                issueTTL = previousTTL
                cap = previousCap
            } else {
                let issuedAt = json["issuedAt"]?.stringValue.flatMap(RFC3339.parse)
                let maxExpiresAt = json["maxExpiresAt"]?.stringValue.flatMap(RFC3339.parse)
                func since(_ date: Date?) -> Duration? {
                    guard let date, let issuedAt else { return nil }
                    let seconds = date.timeIntervalSince(issuedAt)
                    return seconds >= 0 && seconds <= 1e9 ? .milliseconds(Int64(seconds * 1000)) : nil
                }
                issueTTL = since(expiresAt).map { max($0, stated) } ?? stated
                cap = sent + max(since(maxExpiresAt) ?? issueTTL, issueTTL)
            }
            self.issueTTL = issueTTL
            self.cap = cap
            let expires = max(sent + stated, min(sent + issueTTL, cap))
            self.expires = expires
            length = expires - sent
        case .null?, nil:
            length = nil
            expires = nil
            cap = nil
            issueTTL = nil
        default:
            throw KeychainError(.decode, "keychaind answered a ttl that is not a whole number of seconds")
        }
    }

    init(token: String, length: Duration?, expires: ContinuousClock.Instant?, cap: ContinuousClock.Instant?) {
        self.token = token
        self.length = length
        self.expires = expires
        self.cap = cap
        issueTTL = length
    }

    /// From here on a renewal (or login) is started: a third of the lease is left.
    var renewAt: ContinuousClock.Instant? {
        guard let expires, let length else { return nil }
        return expires - length / 3
    }

    /// The token is presented until here: a guard of a sixth of the lease (at most 5 s) before
    /// it expires, for the request's trip. Past it, callers wait for the new token.
    var usableUntil: ContinuousClock.Instant? {
        guard let expires, let length else { return nil }
        return expires - min(length / 6, .seconds(5))
    }

    /// Whether a renewal can still extend the lease by more than a third of a full lease; when
    /// not (the cap is near), the session logs in again instead.
    var renewalExtends: Bool {
        guard let expires, let cap, let issueTTL else { return false }
        return cap - expires > issueTTL / 3
    }
}

/// The credentials of one `KeychainClient` and, for a JWT login, its current token: one per
/// client, shared by the async calls and the synchronous `SecItem*` ones.
///
/// A login or renewal runs as one NIO future (`inFlight`) that every caller needing it waits on
/// (single flight): async callers await it, synchronous ones block on it with `wait()`, as they
/// block on their own request. The state is behind a `Mutex` held only to decide, never across a
/// request, and the future's work runs on NIO's threads, so neither kind of caller can deadlock
/// the other. The future updates the state before it completes, so that its waiters and later
/// callers see the same lease.
///
/// Schedule (the `Lease`'s monotonic instants): before `renewAt` (a third of the lease left) the
/// token is used as is; between `renewAt` and `usableUntil` it is still used while one renewal
/// runs in the background (a failed one is tried again after a second); past `usableUntil`, or
/// with no token, callers wait for the renewal or login. A renewal is made while it can extend
/// the lease by more than a third of its length, else (near `maxExpiresAt`), or when a renewal
/// does not extend it or is answered 401, the session logs in again, reading the JWT file afresh.
/// A request answered 401 makes the session drop that token and log in again (once, shared).
final class TokenSession: Sendable {
    enum Credentials: Sendable {
        case token(String)
        case jwt(role: String, tokenFile: String)
    }

    /// What a caller does: present a token, or wait for the login or renewal in flight.
    enum Step {
        case use(String)
        case wait(EventLoopFuture<Lease>)
    }

    private enum Work {
        case login
        case renew(Lease)
    }

    private struct State {
        var lease: Lease?
        var inFlight: EventLoopFuture<Lease>?
        /// When the last background refresh failed: the next waits a second.
        var failedAt: ContinuousClock.Instant?
        var logins = 0
        var renewals = 0
        var refusedRequests = 0
    }

    static let retryDelay = Duration.seconds(1)

    let credentials: Credentials
    private let state = Mutex(State())
    /// The monotonic clock (a test's own, to step through a lease).
    let now: @Sendable () -> ContinuousClock.Instant

    init(_ credentials: Credentials, now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.credentials = credentials
        self.now = now
    }

    var isLogin: Bool {
        if case .jwt = credentials { true } else { false }
    }

    var status: LoginSessionStatus? {
        guard isLogin else { return nil }
        let now = now()
        return state.withLock { state in
            LoginSessionStatus(
                logins: state.logins, renewals: state.renewals, refusedRequests: state.refusedRequests,
                accessor: state.lease?.accessor,
                secondsLeft: state.lease?.expires.map { max(0, Self.seconds($0 - now)) })
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    // MARK: - Deciding

    /// The token to present now, or the login or renewal to wait for (started here if needed).
    func step(_ client: KeychainClient) -> Step {
        guard case .jwt = credentials else {
            if case .token(let token) = credentials { return .use(token) }
            return .use("")
        }
        let now = now()
        var start: (Work, EventLoopPromise<Lease>)?
        let step: Step = state.withLock { state in
            if let lease = state.lease {
                guard let renewAt = lease.renewAt, let usableUntil = lease.usableUntil, now >= renewAt else {
                    return .use(lease.token)
                }
                if now < usableUntil {
                    if state.inFlight == nil, state.failedAt.map({ now - $0 >= Self.retryDelay }) ?? true {
                        start = Self.begin(Self.work(for: lease, at: now), &state, client)
                    }
                    return .use(lease.token)
                }
            }
            if let inFlight = state.inFlight { return .wait(inFlight) }
            let work = state.lease.map { Self.work(for: $0, at: now) } ?? .login
            let begun = Self.begin(work, &state, client)
            start = begun
            return .wait(begun.1.futureResult)
        }
        if let start { run(start.0, client).cascade(to: start.1) }
        return step
    }

    /// After a request presenting `token` was answered 401: that token is dead (expired,
    /// revoked, or its role narrowed); log in again, unless another caller already has.
    func stepAfterRefusal(of token: String, _ client: KeychainClient) -> Step {
        var start: (Work, EventLoopPromise<Lease>)?
        let step: Step = state.withLock { state in
            state.refusedRequests += 1
            if let inFlight = state.inFlight { return .wait(inFlight) }
            if let lease = state.lease, lease.token != token { return .use(lease.token) }
            state.lease = nil
            let begun = Self.begin(.login, &state, client)
            start = begun
            return .wait(begun.1.futureResult)
        }
        if let start { run(start.0, client).cascade(to: start.1) }
        return step
    }

    private static func work(for lease: Lease, at now: ContinuousClock.Instant) -> Work {
        guard let expires = lease.expires, now < expires, lease.renewalExtends else { return .login }
        return .renew(lease)
    }

    /// Marks `work` in flight (under the lock); the caller runs it once the lock is released.
    private static func begin(
        _ work: Work, _ state: inout State, _ client: KeychainClient
    ) -> (Work, EventLoopPromise<Lease>) {
        let promise = client.eventLoop.makePromise(of: Lease.self)
        state.inFlight = promise.futureResult
        return (work, promise)
    }

    // MARK: - Logging in and renewing

    /// The work, then the state updated from its outcome (before the waiters see it).
    private func run(_ work: Work, _ client: KeychainClient) -> EventLoopFuture<Lease> {
        let future: EventLoopFuture<(Lease, Bool)>
        switch work {
        case .login: future = login(client).map { ($0, false) }
        case .renew(let lease): future = renew(lease, client)
        }
        return future.map { outcome in
            let (lease, renewed) = outcome
            return self.state.withLock { state in
                state.lease = lease
                state.inFlight = nil
                state.failedAt = nil
                if renewed { state.renewals += 1 } else { state.logins += 1 }
                return lease
            }
        }.flatMapErrorThrowing { error in
            let now = self.now()
            self.state.withLock { state in
                state.inFlight = nil
                state.failedAt = now
            }
            throw error
        }
    }

    /// `POST /v1/auth/jwt/login` with the JWT file read now (platform tokens rotate).
    private func login(_ client: KeychainClient) -> EventLoopFuture<Lease> {
        guard case .jwt(let role, let tokenFile) = credentials else {
            return client.eventLoop.makeFailedFuture(KeychainError.param("this client has a static token"))
        }
        let jwt: String
        do {
            jwt = try Self.readJWT(tokenFile)
        } catch {
            return client.eventLoop.makeFailedFuture(error)
        }
        let body = JSONWriter.object(capacity: jwt.utf8.count + role.utf8.count + 32) { request in
            request.member("role", role)
            request.member("jwt", jwt)
        }
        let sent = now()
        return client.perform("POST", "/auth/jwt/login", body: body, token: nil).flatMapThrowing { response in
            let json: JSONValue
            do {
                json = try KeychainClient.decode(response)
            } catch let error as KeychainError {
                throw KeychainError(
                    error.code,
                    "login as role \"\(role)\" with the JWT in \(tokenFile): \(error.detail ?? error.message)",
                    temporary: error.isTemporary)
            }
            guard let token = json["token"]?.stringValue, !token.isEmpty else {
                throw KeychainError(.decode, "keychaind answered a login without a token")
            }
            return try Lease(answer: json, token: token, sent: sent)
        }
    }

    /// `POST /v1/auth/token/renew-self`; a new login when it is answered 401 or cannot extend
    /// the lease (the cap reached).
    private func renew(_ lease: Lease, _ client: KeychainClient) -> EventLoopFuture<(Lease, Bool)> {
        let sent = now()
        return client.perform("POST", "/auth/token/renew-self", body: Array("{}".utf8), token: lease.token)
            .flatMap { response in
                let renewed: Lease
                do {
                    if response.status.code == 401 { return self.login(client).map { ($0, false) } }
                    renewed = try Lease(
                        answer: KeychainClient.decode(response), token: lease.token, sent: sent, renewing: lease)
                } catch {
                    return client.eventLoop.makeFailedFuture(error)
                }
                if let old = lease.expires, let new = renewed.expires, new <= old {
                    return self.login(client).map { ($0, false) }
                }
                return client.eventLoop.makeSucceededFuture((renewed, true))
            }
    }

    /// The JWT in `path`, whitespace around it trimmed. Errors name the file, never its contents.
    static func readJWT(_ path: String) throws -> String {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let reason: String
            var isDirectory: ObjCBool = false
            if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
                reason = "no such file"
            } else if isDirectory.boolValue {
                reason = "is a directory"
            } else if !FileManager.default.isReadableFile(atPath: path) {
                reason = "not readable (permissions)"
            } else {
                reason = "cannot be read"
            }
            throw KeychainError.authFailed("JWT file \(path): \(reason)")
        }
        guard data.count <= 16 * 1024, let text = String(data: data, encoding: .utf8) else {
            throw KeychainError.authFailed("JWT file \(path): not a JWT (not UTF-8 text, or over 16 KiB)")
        }
        let jwt = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !jwt.isEmpty else { throw KeychainError.authFailed("JWT file \(path): empty") }
        guard !jwt.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw KeychainError.authFailed("JWT file \(path): not a JWT (holds a control character)")
        }
        return jwt
    }
}
