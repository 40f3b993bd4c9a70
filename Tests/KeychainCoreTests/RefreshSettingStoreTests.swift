import Foundation
import KeychainAPI
import KeychainCore
import KeychainTestSupport
import Testing

/// Refresh settings kept as items in `keychaind.refresh`, over the in-memory store.
@Suite struct RefreshSettingStoreTests {
    let fixture = Fixture()
    /// Reads the tokens back: a client is not answered a refresh token a setting keeps.
    var admin: Client { Client(name: "root", accessGroups: fixture.app.accessGroups, role: .admin, createdAt: Date()) }
    var store: RefreshSettingStore {
        RefreshSettingStore(
            tokens: TokenService(items: fixture.service, metadataFormat: TokenMetadataJSON()), providers: InMemoryProviderStore(),
            format: RefreshRecordJSON())
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
        let start = try #require(try store.start(key))
        stored.state = RefreshState(condition: .ok, lastRefreshAt: fixture.service.clock().truncatedToMilliseconds, failures: 0)
        let expiry = fixture.service.clock().addingTimeInterval(3600).truncatedToMilliseconds
        #expect(try store.store(grant, expiresAt: expiry, record: stored, startedFrom: start))
        let tokens = try store.tokens.tokens(key.naming, client: admin)
        #expect(tokens.accessToken == "new" && tokens.refreshToken == "rotated" && tokens.expiresAt == expiry)
        #expect(try store.record(key)?.state == stored.state)
        #expect(try store.access(key).expiresAt == expiry)
    }

    let grant = TokenGrant(accessToken: "new", refreshToken: "rotated", expiresIn: 3600)

    /// Stores tokens `A`/`R` and a setting for `key`, starts an exchange, runs `meanwhile`, and
    /// answers whether the exchange's tokens were stored.
    func exchangeStored(_ key: RefreshKey, meanwhile: () throws -> Void) throws -> Bool {
        try store.tokens.save(
            TokenUpdate(accessToken: "A", refresh: .set("R"), expiresAt: nil), naming: key.naming, client: fixture.app)
        try store.save(record(key))
        let start = try #require(try store.start(key))
        #expect(start.refreshToken == SecretBytes(utf8: "R"))
        try meanwhile()
        var done = start.record
        done.state.lastRefreshAt = fixture.service.clock().truncatedToMilliseconds
        return try store.store(grant, expiresAt: nil, record: done, startedFrom: start)
    }

    @Test func anExchangeStoresNothingOnceItsSettingOrRefreshTokenWasReplacedOrRemoved() throws {
        let key = RefreshKey(service: "api", user: nil, group: fixture.app.accessGroups[0])
        let naming = key.naming
        // Nothing changed; a new access token alone (the refresh token kept) does not stop it.
        #expect(try exchangeStored(key) {})
        #expect(try store.tokens.tokens(naming, client: admin).refreshToken == "rotated")
        #expect(try exchangeStored(key) {
            try store.tokens.save(TokenUpdate(accessToken: "B", refresh: .keep, expiresAt: nil), naming: naming, client: fixture.app)
        })
        // A new setting (even the same one stored again), a removed setting, a new refresh token.
        #expect(try !exchangeStored(key) { try store.save(record(key)) })
        #expect(try store.record(key)?.state.lastRefreshAt == nil)
        #expect(try !exchangeStored(key) { _ = try store.delete(key) })
        #expect(try store.record(key) == nil)
        #expect(try store.tokens.tokens(naming, client: fixture.app).accessToken == "A")
        #expect(try !exchangeStored(key) {
            try store.tokens.save(TokenUpdate(accessToken: "C", refresh: .set("S"), expiresAt: nil), naming: naming, client: fixture.app)
        })
        let tokens = try store.tokens.tokens(naming, client: admin)
        #expect(tokens.accessToken == "C" && tokens.refreshToken == "S")
        // A failure's state is not saved over a removed setting either.
        try store.save(record(key))
        let start = try #require(try store.start(key))
        _ = try store.delete(key)
        var failing = start.record
        failing.state.condition = .failing
        #expect(try !store.save(failing, startedFrom: start))
        #expect(try store.record(key) == nil)
    }
}
