import KeychainCore

/// Tells the provider's refusal of the stored refresh token (the service needs new tokens) from
/// its refusal of one that is no longer stored: another exchange, node or client stored newer
/// tokens while this exchange's call was in flight, and a rotating provider revokes the refresh
/// token it replaced. Only the first puts a setting in needsReauth; after the second the exchange
/// reads the stored tokens again and uses them (docs/api.md, "Keeping tokens fresh").
enum LostRotation {
    /// How many times one exchange follows newer tokens before it lets a refusal stand (the
    /// outcome is then discarded, never needsReauth, as the refused token is not the stored one).
    static let followLimit = 2

    /// Whether `failure` is `invalid_grant` for a refresh token other than the one stored now.
    static func refusedReplacedToken(_ failure: TokenExchangeFailure, from start: ExchangeStart, in store: RefreshSettingStore)
        throws -> Bool
    {
        guard case .refused("invalid_grant", _) = failure, start.record.setting.grant == .refreshToken else { return false }
        return try store.refreshToken(start.record.key) != start.refreshToken
    }
}
