public import Foundation

/// A provider app: one client (`clientId`) at one token endpoint. A provider's rate limit
/// (`Retry-After` on 429 or 503) applies to the app, not to the one service whose exchange
/// happened to receive it: every refresh setting that shares the endpoint and client id is held
/// alike (docs/api.md, "Keeping tokens fresh").
public struct ProviderApp: Sendable, Hashable, CustomStringConvertible {
    /// The token endpoint's URL exactly as the setting (or its provider) names it.
    public var tokenEndpoint: String
    public var clientId: String

    public init(tokenEndpoint: String, clientId: String) {
        self.tokenEndpoint = tokenEndpoint
        self.clientId = clientId
    }

    /// The app a setting's exchange calls, as resolved when the exchange runs.
    public init(_ setting: RefreshSetting) {
        self.init(tokenEndpoint: setting.tokenEndpoint.text, clientId: setting.clientId)
    }

    public var description: String { "client \"\(clientId)\" at \(tokenEndpoint)" }
}

/// Where holds on provider apps are kept, so that every node sharing the vault honours a
/// `Retry-After` that one of them received: no call to the app's token endpoint before the
/// hold's end. A hold is never shortened by a later, earlier-ending one; holds that have ended
/// are of no use and may be forgotten. The database is untrusted: readers cap what they read
/// (`ProviderHoldingEndpoint`).
public protocol ProviderHoldStore: Sendable {
    /// The end of the hold on `app` when it is after `now`; nil when none is stored or it has ended.
    func holdEnd(_ app: ProviderApp, now: Date) throws -> Date?

    /// Holds `app` until `until`, unless a hold ending later is stored already; forgets the holds
    /// (of any app) that ended before `now`.
    func hold(_ app: ProviderApp, until: Date, now: Date) throws
}
