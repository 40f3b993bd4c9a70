public import KeychainCore
import Synchronization

/// The audit line of a token exchange made by server-side refresh, whether a request or the
/// background refresher started it: `"client":"keychaind-refresh"`, `"phase":"refresh"`, the
/// route of the refresh setting, the service (and user, group) tagged as a path parameter is,
/// `status` 200 for new tokens, 409 for an outcome discarded (the setting or tokens were replaced
/// meanwhile) or 502 for a failure, and `refresh` the state the setting is in afterwards (`none`:
/// it was removed). Never a token, a secret or the provider's error text.
extension Auditor {
    public func recordRefresh(_ key: RefreshKey, outcome: RefreshStatistics.Outcome, state: RefreshState.Condition?) {
        var entry = Entry(
            id: sequence.add(1, ordering: .relaxed).newValue, method: "POST", route: "/tokens/{service}/refresh",
            remote: nil)
        entry.client = "keychaind-refresh"
        var parameters = [
            ("accessGroup", tag("accessGroup", Self.raw(key.group))), ("service", tag("service", Self.raw(key.service))),
        ]
        if let user = key.user { parameters.append(("user", tag("user", Self.raw(user)))) }
        entry.subject.parameters = parameters + [("refresh", state?.rawValue ?? "none")]
        switch outcome {
        case .refreshed:
            entry.status = 200
            entry.osStatus = 0
        case .discarded:
            entry.status = 409
            entry.osStatus = 0
        case .failed, .needsReauth:
            entry.status = 502
            entry.osStatus = KeychainError.Code.serviceNotAvailable.rawValue
        }
        _ = withLine(entry, phase: "refresh") { sink.write($0) }
    }
}
