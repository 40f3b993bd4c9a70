import Foundation
import KeychainAPI
import KeychainCore
import KeychainTestSupport
import Testing

/// Refresh settings kept as items in `keychaind.refresh`, over the in-memory store.
@Suite struct RefreshSettingStoreTests {
    let fixture = Fixture()
    var store: RefreshSettingStore {
        RefreshSettingStore(
            tokens: TokenService(items: fixture.service, metadataFormat: TokenMetadataJSON()), format: RefreshRecordJSON())
    }

    func record(_ key: RefreshKey) throws -> RefreshRecord {
        RefreshRecord(
            key: key,
            setting: RefreshSetting(
                tokenEndpoint: try TokenEndpointURL("https://auth.example.com/token"), grant: .clientCredentials,
                clientId: "app", clientSecret: SecretBytes(utf8: "s3cret")),
            state: RefreshState())
    }

    @Test func keysWithAnyGroupAndUserComeBackAsTheyWere() throws {
        let keys = [
            RefreshKey(service: "api", user: nil, group: "billing"),
            RefreshKey(service: "api", user: "ann/b:c", group: "billing"),
            RefreshKey(service: "api", user: nil, group: "a:b/c"),
            RefreshKey(service: "api", user: "", group: "billing"),
        ]
        for key in keys { try store.save(record(key)) }
        #expect(Set(try store.records().map(\.key)) == Set(keys))
        for key in keys { #expect(try store.record(key) == record(key)) }
        #expect(try store.delete(keys[1]) == 1)
        #expect(try store.record(keys[1]) == nil)
        #expect(try store.record(keys[0])?.setting.clientSecret == SecretBytes(utf8: "s3cret"))
    }

    @Test func noClientSeesTheSettingsThroughTheItems() throws {
        try store.save(record(RefreshKey(service: "api", user: nil, group: fixture.app.accessGroups[0])))
        let query = ItemQuery(itemClass: .genericPassword, attributes: [:], limit: .all, returnKinds: [.attributes])
        #expect(throws: KeychainError.self) { try fixture.service.copyMatching(query, client: fixture.app) }
    }

    @Test func anExchangesTokensAndStateAreStoredTogether() throws {
        let key = RefreshKey(service: "api", user: nil, group: fixture.app.accessGroups[0])
        var stored = try record(key)
        try store.save(stored)
        stored.state = RefreshState(condition: .ok, lastRefreshAt: fixture.service.clock().truncatedToMilliseconds, failures: 0)
        let expiry = fixture.service.clock().addingTimeInterval(3600).truncatedToMilliseconds
        try store.store(TokenGrant(accessToken: "new", refreshToken: "rotated", expiresIn: 3600), expiresAt: expiry, record: stored)
        let tokens = try store.tokens.tokens(key.naming, client: fixture.app)
        #expect(tokens.accessToken == "new" && tokens.refreshToken == "rotated" && tokens.expiresAt == expiry)
        #expect(try store.record(key)?.state == stored.state)
        #expect(try store.access(key).expiresAt == expiry)
    }
}
