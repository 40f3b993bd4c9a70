import Foundation
import KeychainAPI
import KeychainCore
import KeychainTestSupport
import Testing

/// What a connect stores (`RefreshSettingStore.storeConnected`), over the in-memory store.
@Suite struct StoreConnectedTests {
    let fixture = Fixture()
    let providers = InMemoryProviderStore()
    var admin: Client { Client(name: "root", accessGroups: fixture.app.accessGroups, role: .admin, createdAt: Date()) }
    var store: RefreshSettingStore {
        RefreshSettingStore(
            tokens: TokenService(items: fixture.service, metadataFormat: TokenMetadataJSON()), providers: providers,
            format: RefreshRecordJSON())
    }
    var key: RefreshKey { RefreshKey(service: "calendar", user: "ana", group: fixture.app.accessGroups[0]) }

    @Test func tokensAndASettingNamingTheProviderAreStoredTogether() throws {
        let provider = try ProviderStoreConformance.provider("cal", secret: "s3cret")
        try providers.save(provider)
        _ = try fixture.store.putWebhook(
            WebhookStoreConformance.webhook("ops", [.connected]), secret: WebhookSecret.generate(), replacingSecret: false)
        let expiry = fixture.service.clock().addingTimeInterval(3600).truncatedToMilliseconds
        try store.storeConnected(
            TokenGrant(accessToken: "access-1", refreshToken: "refresh-1", expiresIn: 3600), key: key, expiresAt: expiry,
            provider: provider, connectId: "session-1", at: fixture.service.clock())
        let tokens = try store.tokens.tokens(key.naming, client: admin)
        #expect(tokens.accessToken == "access-1" && tokens.refreshToken == "refresh-1" && tokens.expiresAt == expiry)
        #expect(tokens.refreshBefore == RefreshSetting.defaultRefreshBefore && tokens.version == 1)
        let record = try #require(try store.record(key))
        #expect(record.setting.provider == "cal" && record.setting.grant == .refreshToken)
        #expect(record.state.condition == .ok)
        #expect(record.state.nextRefreshAt == expiry.addingTimeInterval(-Double(RefreshSetting.defaultRefreshBefore)))
        // The `connected` event was enqueued with the tokens, naming the session and the setting's state.
        let events = try fixture.store.pendingDeliveries().map(\.event)
        #expect(events.map(\.kind) == [.connected] && events.first?.connectId == "session-1")
        #expect(events.first?.refreshState == .ok && events.first?.service == "calendar" && events.first?.user == "ana")

        // A reconnect without a refresh token leaves nothing of the older grant.
        try store.storeConnected(
            TokenGrant(accessToken: "access-2"), key: key, expiresAt: nil, provider: provider, connectId: "session-2",
            at: fixture.service.clock())
        let again = try store.tokens.tokens(key.naming, client: admin)
        #expect(again.accessToken == "access-2" && again.refreshToken == nil && again.version == 2)
        #expect(try store.record(key) == nil)
        let second = try fixture.store.pendingDeliveries().map(\.event).filter { $0.connectId == "session-2" }
        #expect(second.count == 1 && second.first?.refreshState == nil, "no setting stored: no refresh state")
    }

    @Test func aSettingOfAnotherProviderOrEndpointRefusesTheStoreWhole() throws {
        let provider = try ProviderStoreConformance.provider("cal", secret: "s3cret")
        try providers.save(provider)
        try store.save(
            RefreshRecord(
                key: key,
                setting: RefreshSetting(
                    tokenEndpoint: try TokenEndpointURL("https://other.example/token"), grant: .refreshToken, clientId: "x",
                    clientSecret: SecretBytes(utf8: "y")),
                state: RefreshState()))
        _ = try fixture.store.putWebhook(
            WebhookStoreConformance.webhook("ops", [.connected]), secret: WebhookSecret.generate(), replacingSecret: false)
        let error = #expect(throws: KeychainError.self) {
            try store.storeConnected(
                TokenGrant(accessToken: "access", refreshToken: "refresh"), key: key, expiresAt: nil, provider: provider,
                connectId: "refused", at: fixture.service.clock())
        }
        #expect(try fixture.store.pendingDeliveries().isEmpty, "nothing stored: no connected event")
        #expect(error?.code == .duplicateItem)
        #expect(try store.access(key).stored == false)
        #expect(try store.record(key)?.setting.provider == nil)
    }
}
