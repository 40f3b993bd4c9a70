public import Foundation
public import KeychainCore

/// The one place an exchange asks whether its provider app may be called: a `TokenEndpoint` in
/// front of the real one. While the app (token endpoint and client id, as resolved for this
/// exchange) is held, no call is made and the exchange fails with `.held` and the hold's end; a
/// 429 or 503 with `Retry-After` starts a hold of at most `maximumHold` seconds for every setting
/// of that app, on every node sharing `holds` (docs/api.md, "Keeping tokens fresh").
public final class ProviderHoldingEndpoint: TokenEndpoint {
    let endpoint: any TokenEndpoint
    let holds: any ProviderHoldStore
    /// `refresh.maxRetryAfterSeconds`: the longest hold, whatever the provider asked or the
    /// (untrusted) database says.
    let maximumHold: TimeInterval
    let clock: @Sendable () -> Date

    public init(
        _ endpoint: any TokenEndpoint, holds: any ProviderHoldStore, maximumHold: TimeInterval,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.endpoint = endpoint
        self.holds = holds
        self.maximumHold = maximumHold
        self.clock = clock
    }

    public func exchange(_ setting: RefreshSetting, refreshToken: SecretBytes?) throws(TokenExchangeFailure) -> TokenGrant {
        let app = ProviderApp(setting)
        let now = clock()
        let held: Date?
        do {
            held = try holds.holdEnd(app, now: now)
        } catch {
            throw .unavailable("the provider's hold could not be read (\(Self.storageFailure(error)))")
        }
        if let held {
            throw .held(
                until: min(held, now.addingTimeInterval(maximumHold)).truncatedToMilliseconds,
                reason: "the token endpoint asked for no calls from this client (Retry-After)")
        }
        do {
            return try endpoint.exchange(setting, refreshToken: refreshToken)
        } catch .throttled(let reason, let seconds) {
            // Rounded up to the millisecond that dates are stored in: never earlier than asked.
            let wait = min(Double(seconds), maximumHold)
            let answered = clock()
            let until = Date(millisecondsSince1970: Int64(((answered.timeIntervalSince1970 + wait) * 1000).rounded(.up)))
            // Not stored, the hold still holds this setting; the others learn of it when they call.
            try? holds.hold(app, until: until, now: answered)
            throw .held(until: until, reason: reason)
        }
    }

    /// A revocation is not held: it is one call after a delete, made once, and a provider that
    /// refuses it harms nothing stored.
    public func revoke(_ refreshToken: SecretBytes, at provider: OAuthProvider) throws(TokenExchangeFailure) {
        try endpoint.revoke(refreshToken, at: provider)
    }

    /// What a store's failure says: its OSStatus name only (a detail could name stored values).
    private static func storageFailure(_ error: any Error) -> String {
        (error as? KeychainError).map { "\($0.code)" } ?? "storage failed"
    }
}
