import Foundation
import KeychainAPI
import KeychainCore
import KeychainTestSupport
import Testing

/// `KeptRefreshTokens` (review finding 3) over the in-memory store: a client's searches pass over
/// a kept refresh token without losing the items after it, limits and pages counting only what
/// the client sees.
@Suite struct KeptRefreshTokensTests {
    let fixture = Fixture(pageSize: 2)
    let admin = Client(name: "root", accessGroups: ["team.app"], role: .admin, createdAt: Date())

    init() throws {
        let settings = RefreshSettingStore(
            tokens: TokenService(items: fixture.service, metadataFormat: TokenMetadataJSON()), providers: InMemoryProviderStore(),
            format: RefreshRecordJSON())
        try settings.save(
            RefreshRecord(
                key: RefreshKey(service: "api", user: nil, group: "team.app"),
                setting: RefreshSetting(
                    tokenEndpoint: try TokenEndpointURL("https://auth.example.com/token"), grant: .refreshToken,
                    clientId: "app", clientSecret: SecretBytes(utf8: "s3cret")),
                state: RefreshState()))
        // The refresh token first, so that it leads every search of the service (an admin's add:
        // a client's is refused).
        for account in ["refreshToken", "accessToken", "a", "b", "c"] {
            try fixture.add(
                [("service", .string("api")), ("account", .string(account)), ("value", .string("v-\(account)"))], as: admin)
        }
    }

    func accounts(_ pairs: [(String, JSONValue)], as client: Client) throws -> [String] {
        var query = try fixture.query([("service", .string("api"))] + pairs)
        var accounts: [String] = []
        while true {
            let result = try fixture.service.copyMatching(query, client: client)
            accounts += result.items.compactMap { if case .string(let account)? = $0.item[.account] { account } else { nil } }
            guard let next = result.next else { return accounts }
            query.cursor = next
        }
    }

    @Test func aClientsSearchesPassOverTheKeptTokenAndKeepTheirLimits() throws {
        #expect(try accounts([], as: fixture.app) == ["accessToken"])
        #expect(try accounts([("limit", .string("all"))], as: fixture.app) == ["accessToken", "a", "b", "c"])
        #expect(try accounts([("limit", .string("3"))], as: fixture.app) == ["accessToken", "a", "b"])
        #expect(try accounts([("limit", .string("all"))], as: admin) == ["refreshToken", "accessToken", "a", "b", "c"])
        #expect(throws: KeychainError.self) {
            try fixture.find([("service", .string("api")), ("account", .string("refreshToken"))])
        }
    }

    @Test func aClientsUpdatesAndDeletesPassOverTheKeptToken() throws {
        #expect(try fixture.update([("service", .string("api"))], set: [("label", .string("x"))]) == 4)
        #expect(try fixture.delete([("service", .string("api"))]) == 4)
        #expect(try accounts([("limit", .string("all"))], as: admin) == ["refreshToken"])
        #expect(throws: KeychainError.self) { try fixture.delete([("service", .string("api"))]) }
    }
}
