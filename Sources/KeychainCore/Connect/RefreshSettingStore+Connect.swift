public import Foundation

extension RefreshSettingStore {
    /// Stores what a connect session obtained under `key`, in one transaction: the access token
    /// with its expiry, the refresh token, and a refresh setting naming `provider` (its state
    /// fresh, due `refreshBefore` ahead of expiry). A grant without a refresh token stores the
    /// access token alone and removes the refresh token and the setting stored before: what is
    /// stored is then the new grant and nothing older. The `connected` webhook event of session
    /// `connectId` is enqueued in the same transaction: it fires exactly when the tokens are
    /// stored. Throws errSecDuplicateItem, nothing stored, when the service has meanwhile been
    /// given a setting with another provider or endpoint.
    public func storeConnected(
        _ grant: TokenGrant, key: RefreshKey, expiresAt: Date?, provider: OAuthProvider, connectId: String, at now: Date
    ) throws {
        let naming = key.naming
        let keeper = Self.keeper(key.group)
        let refreshBefore = RefreshSetting.defaultRefreshBefore
        let record = grant.refreshToken.map { _ in
            RefreshRecord(
                key: key, setting: RefreshSetting(provider: provider),
                state: RefreshState(nextRefreshAt: expiresAt?.addingTimeInterval(-Double(refreshBefore))))
        }
        let deleting = [tokens.query(naming, .accessToken), tokens.query(naming, .refreshToken), Self.query(key)]
        // The version counts stores, as a PUT's does: the access token read is still the one
        // stored when the replace commits, or it is tried again.
        for _ in 0..<16 {
            let stored = try tokens.item(naming, .accessToken, client: keeper)
            let metadata = TokenMetadata(
                expiresAt: expiresAt, refreshBefore: record == nil || expiresAt == nil ? nil : refreshBefore,
                version: (stored.flatMap(tokens.metadata(of:))?.version ?? 0) + 1)
            var adding = [tokens.newItem(naming, .accessToken, grant.accessToken, metadata: metadata)]
            if let refreshToken = grant.refreshToken { adding.append(tokens.newItem(naming, .refreshToken, refreshToken, metadata: nil)) }
            if let record { adding.append(item(record)) }
            let connected = WebhookEvent.connected(key, connectId: connectId, refreshState: record.map { _ in .ok }, at: now)
            let replaced = try tokens.items.replace(deleting: deleting, adding: adding, client: keeper, recording: [connected]) { read in
                guard try read(tokens.query(naming, .accessToken))?.persistentRef == stored?.persistentRef else { return false }
                if let setting = try read(Self.query(key)), !names(setting, provider: provider.name) {
                    throw KeychainError.duplicateItem(
                        "\(key) was given a refresh setting with another provider or endpoint; the connected tokens were not stored")
                }
                return true
            }
            if replaced != nil { return }
        }
        throw KeychainError.io("the tokens for \(key) changed under 16 stores in a row")
    }
}
