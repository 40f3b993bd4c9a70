#if canImport(Glibc)
import Glibc
#endif
import KeychainCore
import Logging

/// What the chain's steps tell each other about one request, which no handler sees; carried
/// `inout` from step to step beside the request's `RequestContext`.
struct Exchange {
    /// The matched route; nil when none matched (the router answers 404 or 405).
    let route: Router.Route?
    /// The route's pattern, `unmatched` when there is none (metrics, logs and audit lines); taken
    /// once, as the pattern's storage is shared by every worker thread.
    let routeName: String
    /// The methods the path has routes for, when it has none for the request's method (405).
    let allowedMethods: [HTTPMethod]
    /// `CLOCK_MONOTONIC` when the request was routed, and when its answer was ready (0 until asked).
    private let started: UInt64
    private var finished: UInt64 = 0
    /// The OSStatus of the answer, set by whoever answered (nil for a handler's answer of 400 and
    /// above that was no error).
    var osStatus: Int32?
    /// Why authentication refused the request's token (the failed-auth limit counts these, the
    /// audit line names it).
    var refusal: AuthenticationRefusal?
    /// Whether errors are answered in Vault's shape (`HTTPResponse.vaultError`): on a `.vault`
    /// route, and on a `.vaultForVaultToken` one once authentication saw the token in `X-Vault-Token`.
    var vaultErrors: Bool
    /// Set when the failed-auth limit answered 429: such answers are counted, not audited.
    var throttled = false
    /// The audit entry, once the request is authenticated (or its outcome is written).
    var audit: Auditor.Entry?
    /// Set when the handler must wait for a token exchange and may not block (`ExchangeWait.handOff`):
    /// the answer so far is no answer, and nothing of it is logged, counted or audited; the
    /// request is answered again once the exchange ends.
    var awaited: ExchangeInProgress?

    init(route: Router.Route?, allowedMethods: [HTTPMethod], started: UInt64) {
        self.route = route
        routeName = route?.pattern ?? "unmatched"
        vaultErrors = route?.surface == .vault
        self.allowedMethods = allowedMethods
        self.started = started
    }

    /// Time from routing to the answer; the clock is read once, by the first step that asks
    /// after the answer is ready, and every later step reports the same time.
    mutating func elapsedNanoseconds() -> UInt64 {
        if finished == 0 { finished = Self.monotonicNanoseconds() }
        return finished - started
    }

    /// The answer to `error` (an error that is no `KeychainError` is logged, by type only, and
    /// answered as errSecIO), its OSStatus noted for the audit line.
    mutating func answer(_ error: any Error, logger: Logger) -> HTTPResponse {
        let keychainError: KeychainError
        if let error = error as? KeychainError {
            keychainError = error
        } else {
            logger.error("unexpected error in \(routeName): \(type(of: error))")
            keychainError = KeychainError.io("internal error")
        }
        return refuse(keychainError)
    }

    /// The answer to `error` in the route's shape (keychaind's or Vault's), `status` overriding
    /// the error's own where the condition decides it (413), its OSStatus noted for the audit line.
    mutating func refuse(_ error: KeychainError, status: Int? = nil) -> HTTPResponse {
        osStatus = error.status
        return vaultErrors ? .vaultError(error, status: status) : .error(error, status: status)
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
