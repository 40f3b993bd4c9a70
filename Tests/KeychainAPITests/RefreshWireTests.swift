import Foundation
import KeychainAPI
import KeychainCore
import Testing

/// The wire and stored forms of server-side refresh: the PUT body, the stored record (without the
/// client secret), the answer (never the client secret), and `refreshBefore` in token metadata.
struct RefreshWireTests {
    static let body = #"{"tokenEndpoint":"https://auth.example.com/token","grant":"refresh_token","clientId":"app","clientSecret":"s3cret"}"#

    /// The provider the bodies below may name.
    static func crm() throws -> OAuthProvider {
        OAuthProvider(
            name: "crm", authorizationEndpoint: try TokenEndpointURL("https://crm.example/authorize"),
            tokenEndpoint: try TokenEndpointURL("https://crm.example/token"), clientId: "crm-app",
            clientSecret: SecretBytes(utf8: "crm-secret"), clientAuth: .post, accessGroups: ["sales"])
    }

    func decode(_ text: String) throws -> RefreshPutRequest {
        try RefreshPutRequest(decoding: JSONBody(parsing: Array(text.utf8)), provider: Self.lookUp)
    }

    static func lookUp(_ name: String) throws -> OAuthProvider? { name == "crm" ? try crm() : nil }

    @Test func aMinimalBodyTakesTheDefaults() throws {
        let setting = try decode(Self.body).setting
        #expect(setting.tokenEndpoint.text == "https://auth.example.com/token")
        #expect(setting.grant == .refreshToken && setting.clientId == "app")
        #expect(setting.clientSecret == SecretBytes(utf8: "s3cret"))
        #expect(setting.clientAuth == .basic && setting.scope == nil && setting.audience == nil)
        #expect(setting.refreshBefore == 60)
        // The client's encoding decodes to the same setting.
        #expect(try RefreshPutRequest(decoding: JSONBody(parsing: RefreshPutRequest(setting: setting).encoded()), provider: Self.lookUp).setting == setting)
    }

    /// A setting that names a provider takes its endpoint and client from it, grant
    /// refresh_token unless it says; the client's encoding names the provider, not its secret.
    @Test func aBodyMayNameAProviderInsteadOfEndpointAndClient() throws {
        let setting = try decode(#"{"provider":"crm","scope":"contacts","refreshBefore":120}"#).setting
        #expect(setting.provider == "crm" && setting.grant == .refreshToken && setting.scope == "contacts")
        #expect(setting.tokenEndpoint.text == "https://crm.example/token" && setting.clientId == "crm-app")
        #expect(setting.clientAuth == .post && setting.clientSecret == SecretBytes(utf8: "crm-secret") && setting.refreshBefore == 120)
        let encoded = RefreshPutRequest(setting: setting).encoded()
        #expect(String(decoding: encoded, as: UTF8.self) == #"{"provider":"crm","grant":"refresh_token","scope":"contacts","refreshBefore":120}"#)
        #expect(try RefreshPutRequest(decoding: JSONBody(parsing: encoded), provider: Self.lookUp).setting == setting)
    }

    @Test(arguments: [
        (#"{"provider":"crm","tokenEndpoint":"https://a/t"}"#,
         "\"tokenEndpoint\" is the provider's: a setting names a provider or gives its own endpoint and client, not both"),
        (#"{"provider":"crm","clientSecret":"s"}"#,
         "\"clientSecret\" is the provider's: a setting names a provider or gives its own endpoint and client, not both"),
        (#"{"tokenEndpoint":"https://a/t","grant":"refresh_token","clientId":"a","clientSecret":"s","provider":"crm"}"#,
         "\"tokenEndpoint\" is the provider's: a setting names a provider or gives its own endpoint and client, not both"),
        (#"{"provider":"nobody"}"#, "no provider named \"nobody\" is set up"),
        (#"{"provider":""}"#, "\"provider\" must be a non-empty string"),
        (#"{"provider":"crm","color":"red"}"#,
         "unknown key \"color\"; a refresh setting that names a provider takes grant, scope and refreshBefore beside it"),
    ])
    func aBodyNamingAProviderTakesNothingOfTheProvidersOwn(text: String, detail: String) {
        #expect(throws: KeychainError.param(detail)) { try decode(text) }
    }

    /// A stored record that names a provider keeps only the name; it is read with the provider
    /// as it is then (a new secret is what the next read gives).
    @Test func aStoredRecordNamingAProviderIsReadWithTheProviderAsItIsNow() throws {
        let format = RefreshRecordJSON()
        let setting = RefreshSetting(provider: try Self.crm(), scope: "contacts")
        let stored = format.encode(setting, RefreshState())
        let text = String(decoding: stored, as: UTF8.self)
        #expect(text.contains(#""provider":"crm""#) && !text.contains("crm-secret") && !text.contains("tokenEndpoint"))
        #expect(format.providerName(stored) == "crm")
        var rotated = try Self.crm()
        rotated.clientSecret = SecretBytes(utf8: "rotated")
        let read = try #require(try format.decode(stored, clientSecret: nil, provider: { _ in rotated }))
        #expect(read.0.provider == "crm" && read.0.clientSecret == SecretBytes(utf8: "rotated") && read.0.scope == "contacts")
        #expect(throws: KeychainError.self) {
            try format.decode(stored, clientSecret: nil, provider: { throw KeychainError.itemNotFound("no provider \($0)") })
        }
    }

    @Test(arguments: [
        (#"{"grant":"refresh_token","clientId":"a","clientSecret":"s"}"#, "the body needs \"tokenEndpoint\""),
        (#"{"tokenEndpoint":"http://auth.example.com/t","grant":"refresh_token","clientId":"a","clientSecret":"s"}"#,
         "\"tokenEndpoint\" must be https (plain http only to a loopback address)"),
        (#"{"tokenEndpoint":"https://a/t","grant":"password","clientId":"a","clientSecret":"s"}"#,
         "\"grant\" must be refresh_token or client_credentials"),
        (#"{"tokenEndpoint":"https://a/t","grant":"refresh_token","clientId":"a","clientSecret":""}"#,
         "\"clientSecret\" must be a non-empty string"),
        (#"{"tokenEndpoint":"https://a/t","grant":"refresh_token","clientId":"a","clientSecret":"s","refreshBefore":-1}"#,
         "\"refreshBefore\" must be a whole number of seconds from 0 to 86400"),
        (#"{"tokenEndpoint":"https://a/t","grant":"refresh_token","clientId":"a","clientSecret":"s","clientAuth":"jwt"}"#,
         "\"clientAuth\" must be basic or post"),
        (#"{"tokenEndpoint":"https://a/t","grant":"refresh_token","clientId":"a","clientSecret":"s","clientAuth":"none"}"#,
         "\"clientAuth\" must be basic or post"),
    ])
    func aWrongBodyIsErrSecParamNamingTheKey(text: String, detail: String) {
        #expect(throws: KeychainError.param(detail)) { try decode(text) }
    }

    @Test func theStoredRecordAndTheAnswerNeverHoldTheClientSecret() throws {
        var setting = try decode(Self.body).setting
        setting.scope = "read"
        let state = RefreshState(
            condition: .failing, lastRefreshAt: Date(timeIntervalSince1970: 1_795_255_200),
            nextRefreshAt: Date(timeIntervalSince1970: 1_795_255_260), failures: 2, lastError: "HTTP 503")
        let format = RefreshRecordJSON()
        let stored = format.encode(setting, state)
        #expect(!String(decoding: stored, as: UTF8.self).contains("s3cret"))
        let decoded = try #require(try format.decode(stored, clientSecret: SecretBytes(utf8: "s3cret"), provider: Self.noProvider))
        #expect(decoded.0 == setting && decoded.1 == state)

        let key = RefreshKey(service: "api", user: "ann", group: "billing")
        let answer = RefreshAnswer(RefreshRecord(key: key, setting: setting, state: state))
        let text = String(decoding: answer.encoded(), as: UTF8.self)
        #expect(!text.contains("s3cret") && !text.contains("clientSecret"))
        let read = try RefreshAnswer(decoding: JSONValue.parse(answer.encoded()))
        #expect(read.key == key && read.state == state && read.scope == "read")
    }

    /// A record altered in the database (which is not trusted) is no record when its numbers
    /// are out of range: a failure count of Int64.max overflowed at the next failure (issue 40).
    @Test(arguments: [
        #""failures":9223372036854775807,"refreshBefore":60"#, #""failures":-1,"refreshBefore":60"#,
        #""failures":0,"refreshBefore":86401"#, #""failures":0,"refreshBefore":-1"#,
    ])
    func aStoredRecordWithNumbersOutOfRangeIsNoRecord(numbers: String) throws {
        let stored = #"{"tokenEndpoint":"https://a/t","grant":"refresh_token","clientId":"a","clientAuth":"basic","state":"failing","#
        #expect(try RefreshRecordJSON().decode(Array((stored + numbers + "}").utf8), clientSecret: SecretBytes(utf8: "s"), provider: Self.noProvider) == nil)
        let valid = stored + #""failures":3,"refreshBefore":60}"#
        #expect(try RefreshRecordJSON().decode(Array(valid.utf8), clientSecret: SecretBytes(utf8: "s"), provider: Self.noProvider)?.1.failures == 3)
    }

    /// A record of its own names no provider: one that asked for one would fail the test.
    static func noProvider(_ name: String) throws -> OAuthProvider {
        throw KeychainError.itemNotFound("no provider \(name)")
    }

    @Test func tokenMetadataCarriesRefreshBeforeWhenSet() {
        let format = TokenMetadataJSON()
        let expiry = Date(timeIntervalSince1970: 1_795_255_200.123)
        let metadata = TokenMetadata(expiresAt: expiry, refreshBefore: 60)
        #expect(format.encode(metadata) == Array(#"{"expiresAt":"2026-11-21T10:00:00.123Z","refreshBefore":60}"#.utf8))
        #expect(format.decode(format.encode(metadata)) == metadata)
        #expect(format.decode(Array(#"{"expiresAt":"2026-11-21T10:00:00.123Z","refreshBefore":-5}"#.utf8))
            == TokenMetadata(expiresAt: expiry))
    }
}
