/// Limits failed authentications per client address (`AddressBudget`): `failuresPerMinute`
/// failures per address, refilled continuously. While an address's budget is spent, its failed
/// authentications are answered 429 with `Retry-After` instead of 401.
///
/// Only failures are counted and only failures are refused: a request whose token is valid is
/// never looked up here, so valid clients (including ones behind the same proxy or NAT as an
/// attacker) are not slowed (docs/decisions.md, "Hardening").
public final class AuthFailureLimiter: Sendable {
    private let budget: AddressBudget

    /// `now`: monotonic seconds (tests pass a clock they move).
    public init(
        failuresPerMinute: Int, maxAddresses: Int,
        now: @escaping @Sendable () -> Double = AddressBudget.monotonicSeconds
    ) {
        budget = AddressBudget(perMinute: failuresPerMinute, maxAddresses: maxAddresses, now: now)
    }

    public var failuresPerMinute: Int { budget.perMinute }
    public var maxAddresses: Int { budget.maxAddresses }

    /// Records one failed authentication from `address` (nil: unknown, counted together). Returns
    /// nil when it is within the budget (answer 401), or the whole seconds to wait (answer 429).
    public func recordFailure(from address: String?) -> Int? { budget.spend(from: address) }

    /// Failed authentications answered 429 since start (`keychaind_auth_throttled_total`): they
    /// are counted here rather than each written to the audit log.
    /// Whether `address` has spent its budget (a login is then refused before its body is read).
    public func isSpent(for address: String?) -> Bool { budget.isSpent(for: address) }

    public var throttledFailures: UInt64 { budget.refusals }

    /// How many addresses have a bucket (for tests and the reliability figures).
    public var trackedAddresses: Int { budget.trackedAddresses }
}
