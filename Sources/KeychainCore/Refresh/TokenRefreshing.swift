/// Server-side refresh as the token routes see it: what a token fetch asks when the stored access
/// token is missing, expired or within its refresh window, and what the refresh routes do.
/// Implemented by `TokenRefresher` (KeychainRefresh). Only ever called off the hot path: a fetch
/// of a token that is not due never reaches it.
public protocol TokenRefreshing: Sendable {
    /// Brings the tokens `naming` names up to date when a refresh setting covers them (one
    /// exchange per setting however many callers ask at once; the others wait, bounded).
    ///
    /// - Parameters:
    ///   - storedGroup: the group the access token was found in; nil when none was found (then
    ///     every group `client` may search for `naming` is tried).
    ///   - wait: whether the calling thread may wait for the exchange.
    /// - Returns: false when no setting covers the tokens (the caller answers as it would without
    ///   refresh); true when a valid access token is now stored (read it again).
    /// - Throws: errSecServiceNotAvailable (HTTP 502) when a setting covers them, no valid
    ///   access token is stored and the refresh failed; its detail carries the provider's error.
    ///   `ExchangeInProgress` when `wait` is `.handOff` and an exchange is to be waited for.
    func refresh(_ naming: TokenNaming, storedGroup: String?, client: Client, wait: ExchangeWait) throws -> Bool

    /// The `refreshBefore` of the setting that keeps the tokens `naming` names in `group`; nil
    /// when none does. Asked before a client stores new tokens.
    func refreshBefore(_ naming: TokenNaming, group: String) throws -> Int?

    /// New tokens were stored by a client (`PUT /tokens/{service}`): a setting in `needsReauth`
    /// may call the provider again.
    func tokensSaved(_ naming: TokenNaming, group: String) throws

    /// The setting kept for `key`, nil when there is none.
    func record(_ key: RefreshKey) throws -> RefreshRecord?

    /// Runs `delete` (a token DELETE by `client` of the tokens `naming` names) and answers what
    /// it answers. When it removed a refresh token a setting kept whose provider has a revocation
    /// endpoint, that token is revoked there afterwards (RFC 7009), off the calling thread; the
    /// revocation never fails or delays the delete.
    func deleteRevoking(_ naming: TokenNaming, client: Client, _ delete: () throws -> Int) throws -> Int

    /// The provider of that name (a new setting may name it), nil when there is none.
    func provider(named name: String) throws -> OAuthProvider?

    /// Stores (or replaces) the setting for `key`; its state starts afresh.
    func configure(_ setting: RefreshSetting, for key: RefreshKey) throws -> RefreshRecord

    /// Refreshes now, whatever the state; the record as it is afterwards. With `wait` `.handOff`,
    /// throws `ExchangeInProgress` (the exchange started or joined); with `.stored`, only reads.
    func refreshNow(_ key: RefreshKey, wait: ExchangeWait) throws -> RefreshRecord

    /// Removes the setting (the tokens stay); how many were removed.
    func removeSetting(_ key: RefreshKey) throws -> Int
}
