import Foundation
import KeychainAPI
import KeychainCore
import KeychainTestSupport
import Testing

/// TokenService over the in-memory store, with the fixture's clock.
@Suite struct TokenServiceTests {
    let fixture = Fixture()
    var tokens: TokenService { TokenService(items: fixture.service, metadataFormat: TokenMetadataJSON()) }

    @Test func saveKeepsOrRemovesTheRefreshTokenAndReplacesInOneGo() throws {
        let naming = TokenNaming(service: "api")
        try tokens.save(TokenUpdate(accessToken: "a1", refresh: .set("r1")), naming: naming, client: fixture.app)
        #expect(try tokens.save(TokenUpdate(accessToken: "a2"), naming: naming, client: fixture.app).replaced == 1)
        var found = try tokens.tokens(naming, client: fixture.app)
        #expect(found.accessToken == "a2" && found.refreshToken == "r1")
        try tokens.save(TokenUpdate(accessToken: "a3", refresh: .remove), naming: naming, client: fixture.app)
        found = try tokens.tokens(naming, client: fixture.app)
        #expect(found.refreshToken == nil)
        #expect(try tokens.authorization(naming, client: fixture.app).header == "Bearer a3")
        #expect(try tokens.delete(naming, client: fixture.app) == 1)
        #expect(throws: KeychainError.self) { try tokens.delete(naming, client: fixture.app) }
        #expect(throws: KeychainError.self) { try tokens.tokens(naming, client: fixture.app) }
    }

    @Test func userNamingAndGroups() throws {
        let naming = TokenNaming(service: "app", user: "gus@example.com")
        #expect(naming.attributes(.refreshToken) == [.service: .string("app.refreshToken"), .account: .string("gus@example.com")])
        try tokens.save(TokenUpdate(accessToken: "a"), naming: naming, client: fixture.app)
        #expect(throws: KeychainError.self) { try tokens.tokens(naming, client: fixture.stranger) }
        var foreign = naming
        foreign.accessGroup = "team.stranger"
        #expect(throws: KeychainError.missingEntitlement("this client may not use access group \"team.stranger\"")) {
            try tokens.tokens(foreign, client: fixture.app)
        }
    }

    @Test func expiryFromTheServiceClock() throws {
        let naming = TokenNaming(service: "exp")
        let past = Fixture.start.addingTimeInterval(-60)
        try tokens.save(TokenUpdate(accessToken: "old", expiresAt: past), naming: naming, client: fixture.app)
        let found = try tokens.tokens(naming, client: fixture.app)
        #expect(found.expired && found.expiresAt == past.truncatedToMilliseconds)
        #expect {
            try tokens.authorization(naming, client: fixture.app)
        } throws: { error in
            (error as? KeychainError)?.code == .itemNotFound && (error as? KeychainError)?.detail?.contains("expired") == true
        }
        let future = try TokenPutRequest(decoding: JSONBody([("accessToken", .string("new")), ("expiresIn", .integer(3600))]))
            .update(now: Fixture.start)
        try tokens.save(future, naming: naming, client: fixture.app)
        // Fresh until its expiry, in whole seconds (the fixture's clock has ticked past the PUT's
        // moment); without a stored expiry, nobody can say for how long.
        let authorization = try tokens.authorization(naming, client: fixture.app)
        #expect(authorization.header == "Bearer new" && authorization.freshForSeconds == 3599)
    }

    /// The item routes may store what PUT refuses: an empty access token, or bytes that are not
    /// text. `/authorization` never answers `Bearer ` with nothing usable after it.
    @Test(arguments: [
        (nil, "is empty"),
        (("value", JSONValue.string("")), "is empty"),
        (("data", JSONValue.string("/w==")), "is not UTF-8 text"),  // the single byte 0xFF
    ] as [((String, JSONValue)?, String)])
    func authorizationRefusesAnUnusableAccessToken(secret: (String, JSONValue)?, detail: String) throws {
        var pairs: [(String, JSONValue)] = [("service", .string("raw")), ("account", .string("accessToken"))]
        if let secret { pairs.append(secret) }
        try fixture.add(.genericPassword, pairs)
        let naming = TokenNaming(service: "raw")
        #expect {
            try tokens.authorization(naming, client: fixture.app)
        } throws: { error in
            guard let error = error as? KeychainError else { return false }
            return error.code == .itemNotFound
                && error.detail == "the access token stored for service \"raw\" \(detail)"
        }
        try tokens.save(TokenUpdate(accessToken: "usable"), naming: naming, client: fixture.app)
        let authorization = try tokens.authorization(naming, client: fixture.app)
        #expect(authorization.header == "Bearer usable" && authorization.freshForSeconds == nil)
    }
}
