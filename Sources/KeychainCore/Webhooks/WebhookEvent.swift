public import Foundation

/// What a webhook is told (docs/api.md, "Webhooks"): a connect flow that stored tokens, or a
/// refresh setting's state changing. Never a token, never OAuth state: these fields are all of it.
public struct WebhookEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable, Comparable {
        /// A connect session stored tokens.
        case connected
        /// A refresh setting entered `failing`.
        case refreshFailed
        /// A refresh setting entered `needsReauth`.
        case needsReauth
        /// A refresh setting went back to `ok` from `failing` or `needsReauth`.
        case recovered

        public static func < (lhs: Kind, rhs: Kind) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    public var kind: Kind
    public var accessGroup: String
    public var service: String
    public var user: String?
    /// The connect session's id, on `connected` only.
    public var connectId: String?
    /// The refresh setting's state after the event; nil when the tokens have no setting (a
    /// connect that brought no refresh token).
    public var refreshState: RefreshState.Condition?
    /// The provider's OAuth error code and description, or what failed on the way (never a token).
    public var error: String?
    public var at: Date

    public init(
        kind: Kind, accessGroup: String, service: String, user: String?, connectId: String? = nil,
        refreshState: RefreshState.Condition?, error: String? = nil, at: Date
    ) {
        self.kind = kind
        self.accessGroup = accessGroup
        self.service = service
        self.user = user
        self.connectId = connectId
        self.refreshState = refreshState
        self.error = error
        self.at = at
    }

    /// A connect session that stored the tokens of `key`; `refreshState` is the state of the
    /// setting it stored (`ok`), nil when it stored none.
    public static func connected(_ key: RefreshKey, connectId: String, refreshState: RefreshState.Condition?, at: Date)
        -> WebhookEvent
    {
        WebhookEvent(
            kind: .connected, accessGroup: key.group, service: key.service, user: key.user, connectId: connectId,
            refreshState: refreshState, at: at.truncatedToMilliseconds)
    }

    /// The event a setting's move from `old` to `new` fires, if any: entering `failing` is
    /// `refreshFailed`, entering `needsReauth` is `needsReauth`, and `ok` reached from either is
    /// `recovered`. Staying in a state (another failed retry) fires nothing.
    public static func transition(of key: RefreshKey, from old: RefreshState, to new: RefreshState, at: Date)
        -> WebhookEvent?
    {
        guard old.condition != new.condition else { return nil }
        let kind: Kind =
            switch new.condition {
            case .failing: .refreshFailed
            case .needsReauth: .needsReauth
            case .ok: .recovered
            }
        return WebhookEvent(
            kind: kind, accessGroup: key.group, service: key.service, user: key.user, refreshState: new.condition,
            error: new.condition == .ok ? nil : new.lastError, at: at.truncatedToMilliseconds)
    }
}

/// Where the refresher and the connect flow record events: inside the transaction that stores
/// the change they tell of, so that an event is enqueued if and only if its change commits (one
/// delivery per subscribed webhook, each with its `webhook-id` fixed there), on any node.
public protocol WebhookEventRecording {
    /// Enqueues a delivery of `event` to every webhook subscribed to its kind.
    func recordWebhookEvent(_ event: WebhookEvent) throws
}
