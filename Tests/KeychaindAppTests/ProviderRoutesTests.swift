import Foundation
import KeychainAPI
import KeychainCore
import KeychaindTesting
import KeychainHTTP
import Testing

/// OAuth providers over the app as keychaind serves it: the admin routes, their validation
/// (errSecParam, nothing stored), admin clients only, the client secret never answered, and
/// refresh settings that name a provider (which then cannot be removed).
@Suite struct ProviderRoutesTests {
    static let secret = "crm-client-secret-8d1f"

    static func body(_ extra: String = "", secret: String? = ProviderRoutesTests.secret) -> String {
        let secretMember = secret.map { #","clientSecret":"\#($0)""# } ?? ""
        return #"{"authorizationEndpoint":"https://crm.example/authorize","tokenEndpoint":"https://crm.example/token","clientId":"crm-app""#
            + secretMember + #","accessGroups":["sales"]"# + extra + "}"
    }

    @Test func anAdminSetsUpReadsListsReplacesAndRemovesAProviderNeverSeeingItsSecret() throws {
        let server = try TestServer()
        let full = Self.body(
            #","clientAuth":"post","scopes":["contacts.read","offline"],"allowedScopes":["contacts.read","contacts.write","offline"],"#
                + #""authorizationParams":{"prompt":"consent","access_type":"offline"},"revocationEndpoint":"https://crm.example/revoke","#
                + #""issuer":"https://crm.example""#)
        let put = server.app.respond(.put, "/v1/admin/providers/crm", token: server.adminToken, body: full)
        #expect(put.status == 200)
        #expect(!put.text.contains(Self.secret) && !put.text.contains("clientSecret"))
        let provider = put.json["provider"]
        #expect(put.json["status"] == .integer(0))
        #expect(provider?["name"] == .string("crm") && provider?["clientAuth"] == .string("post"))
        #expect(provider?["tokenEndpoint"] == .string("https://crm.example/token") && provider?["clientId"] == .string("crm-app"))
        #expect(provider?["scopes"] == .array([.string("contacts.read"), .string("offline")]))
        #expect(provider?["allowedScopes"] == .array([.string("contacts.read"), .string("contacts.write"), .string("offline")]))
        #expect(provider?["authorizationParams"] == .object([("access_type", .string("offline")), ("prompt", .string("consent"))]))
        #expect(provider?["revocationEndpoint"] == .string("https://crm.example/revoke"))
        #expect(provider?["issuer"] == .string("https://crm.example") && provider?["accessGroups"] == .array([.string("sales")]))

        let read = server.app.respond(.get, "/v1/admin/providers/crm", token: server.adminToken)
        #expect(read.status == 200 && read.json["provider"] == provider && !read.text.contains(Self.secret))
        // Stored sealed: the vault opens it; the answer never carries it.
        #expect(try server.app.providers.provider(named: "crm")?.clientSecret?.utf8String() == Self.secret)

        let publicClient = #"{"authorizationEndpoint":"http://127.0.0.1:9/a","tokenEndpoint":"http://localhost:9/t","clientId":"pkce","clientAuth":"none","accessGroups":["sales","ops"]}"#
        #expect(server.app.respond(.put, "/v1/admin/providers/a-public", token: server.adminToken, body: publicClient).status == 200)
        let list = server.app.respond(.get, "/v1/admin/providers", token: server.adminToken)
        #expect(list.status == 200 && !list.text.contains(Self.secret))
        guard case .array(let providers)? = list.json["providers"] else { Issue.record("no list"); return }
        #expect(providers.map { $0["name"] } == [.string("a-public"), .string("crm")])
        #expect(providers.first?["allowedScopes"] == .null && providers.first?["revocationEndpoint"] == .null)

        // Replaced whole: a new secret, the optional members gone.
        #expect(server.app.respond(.put, "/v1/admin/providers/crm", token: server.adminToken, body: Self.body(secret: "rotated")).status == 200)
        #expect(try server.app.providers.provider(named: "crm")?.clientSecret?.utf8String() == "rotated")
        let replaced = server.app.respond(.get, "/v1/admin/providers/crm", token: server.adminToken).json["provider"]
        #expect(replaced?["clientAuth"] == .string("basic") && replaced?["issuer"] == .null && replaced?["scopes"] == .array([]))

        let deleted = server.app.respond(.delete, "/v1/admin/providers/crm", token: server.adminToken)
        #expect(deleted.status == 200 && deleted.json["deleted"] == .integer(1))
        #expect(server.app.respond(.get, "/v1/admin/providers/crm", token: server.adminToken).status == 404)
        let again = server.app.respond(.delete, "/v1/admin/providers/crm", token: server.adminToken)
        #expect(again.status == 404 && again.json["error"] == .string("errSecItemNotFound"))
    }

    @Test(arguments: [
        (Self.body(secret: nil), #""clientSecret" is required unless "clientAuth" is "none""#),
        (Self.body(#","clientAuth":"none""#), #""clientSecret" is refused with "clientAuth": "none" (a public client has none)"#),
        (Self.body(#","clientAuth":"jwt""#), #""clientAuth" must be basic, post or none"#),
        (Self.body(#","authorizationParams":{"redirect_uri":"https://evil.example/"}"#),
         #""authorizationParams" may not set "redirect_uri": keychaind sends response_type, client_id, redirect_uri, state, code_challenge, code_challenge_method and scope itself"#),
        (Self.body(#","authorizationParams":{"scope":"admin"}"#),
         #""authorizationParams" may not set "scope": keychaind sends response_type, client_id, redirect_uri, state, code_challenge, code_challenge_method and scope itself"#),
        (Self.body(#","authorizationParams":{"prompt":1}"#), #""authorizationParams" must map non-empty names to strings of at most 2048 bytes"#),
        (Self.body(#","scopes":["a","b"],"allowedScopes":["a"]"#), #""allowedScopes" must contain every default scope; it lacks "b""#),
        (Self.body(#","scopes":["a b"]"#),
         #""scopes" must hold scopes: non-empty strings of printable ASCII with no space, quote or backslash (RFC 6749 §3.3)"#),
        (Self.body(#","scopes":["a","a"]"#), #""scopes" names a scope twice"#),
        (Self.body(#","revocationEndpoint":"http://crm.example/revoke""#),
         #""revocationEndpoint" must be https (plain http only to a loopback address)"#),
        (#"{"authorizationEndpoint":"ftp://crm.example/a","tokenEndpoint":"https://crm.example/t","clientId":"c","clientSecret":"s","accessGroups":["g"]}"#,
         #""authorizationEndpoint" must be an absolute http(s) URL"#),
        (#"{"authorizationEndpoint":"https://crm.example/a","tokenEndpoint":"http://10.0.0.1/t","clientId":"c","clientSecret":"s","accessGroups":["g"]}"#,
         #""tokenEndpoint" must be https (plain http only to a loopback address)"#),
        (#"{"authorizationEndpoint":"https://crm.example/a","tokenEndpoint":"https://crm.example/t","clientId":"c","clientSecret":"s","accessGroups":[]}"#,
         #""accessGroups" must name at least one group"#),
        (#"{"authorizationEndpoint":"https://crm.example/a","tokenEndpoint":"https://crm.example/t","clientId":"c","clientSecret":"s"}"#,
         #""accessGroups" is required"#),
        (Self.body(#","color":"red""#),
         #"unknown key "color"; a provider takes authorizationEndpoint, tokenEndpoint, clientId, clientSecret, clientAuth, scopes, allowedScopes, authorizationParams, revocationEndpoint, issuer and accessGroups"#),
    ])
    func aWrongProviderIsErrSecParamAndNothingIsStored(body: String, detail: String) throws {
        let server = try TestServer()
        let answer = server.app.respond(.put, "/v1/admin/providers/crm", token: server.adminToken, body: body)
        #expect(answer.status == 400 && answer.json["error"] == .string("errSecParam"))
        #expect(answer.json["detail"] == .string(detail))
        #expect(!answer.text.contains(Self.secret))
        #expect(server.app.respond(.get, "/v1/admin/providers/crm", token: server.adminToken).status == 404)
    }

    @Test func aNameThatCannotBeAPathSegmentIsRefused() throws {
        let server = try TestServer()
        let answer = server.app.respond(.put, "/v1/admin/providers/CRM", token: server.adminToken, body: Self.body())
        #expect(answer.status == 400 && answer.json["error"] == .string("errSecParam"))
    }

    @Test func onlyAdminsReachTheProviderRoutes() throws {
        let server = try TestServer()
        let client = try server.client("svc", groups: ["sales"])
        #expect(server.app.respond(.put, "/v1/admin/providers/crm", token: server.adminToken, body: Self.body()).status == 200)
        for (method, path, body) in [
            (HTTPMethod.put, "/v1/admin/providers/crm", Self.body(secret: "stolen")), (.get, "/v1/admin/providers", nil),
            (.get, "/v1/admin/providers/crm", nil), (.delete, "/v1/admin/providers/crm", nil),
        ] {
            let answer = server.app.respond(method, path, token: client, body: body)
            #expect(answer.status == 403 && answer.json["error"] == .string("errSecMissingEntitlement"), "\(method) \(path)")
            #expect(server.app.respond(method, path, token: nil, body: body).status == 401)
        }
        #expect(try server.app.providers.provider(named: "crm")?.clientSecret?.utf8String() == Self.secret)
    }

    /// A refresh setting may name a provider (and nothing of the provider's own); it answers the
    /// provider's endpoint and client as they are; the provider cannot be removed while named.
    @Test func aRefreshSettingNamesAProviderWhichThenCannotBeRemoved() throws {
        let server = try TestServer()
        #expect(server.app.respond(.put, "/v1/admin/providers/crm", token: server.adminToken, body: Self.body(#","clientAuth":"post""#)).status == 200)
        let unknown = server.app.respond(.put, "/v1/tokens/crm-api/refresh", token: server.adminToken, body: #"{"provider":"other"}"#)
        #expect(unknown.status == 400 && unknown.json["detail"] == .string(#"no provider named "other" is set up"#))
        let both = server.app.respond(
            .put, "/v1/tokens/crm-api/refresh", token: server.adminToken, body: #"{"provider":"crm","clientId":"x"}"#)
        #expect(both.status == 400 && both.json["error"] == .string("errSecParam"))

        for service in ["crm-api", "crm-other"] {
            let put = server.app.respond(
                .put, "/v1/tokens/\(service)/refresh", token: server.adminToken, body: #"{"provider":"crm","scope":"contacts.read"}"#)
            #expect(put.status == 200 && !put.text.contains(Self.secret))
            #expect(put.json["provider"] == .string("crm") && put.json["grant"] == .string("refresh_token"))
            #expect(put.json["tokenEndpoint"] == .string("https://crm.example/token") && put.json["clientAuth"] == .string("post"))
        }
        let refused = server.app.respond(.delete, "/v1/admin/providers/crm", token: server.adminToken)
        #expect(refused.status == 400 && refused.json["error"] == .string("errSecParam"))
        #expect(refused.json["detail"] == .string(
            #"provider "crm" is named by 2 refresh settings; remove or replace them first (DELETE or PUT /v1/tokens/{service}/refresh)"#))
        #expect(server.app.respond(.get, "/v1/admin/providers/crm", token: server.adminToken).status == 200)

        // The provider's new endpoint is what the setting answers at once.
        let moved = Self.body(secret: "rotated").replacingOccurrences(of: "https://crm.example/token", with: "https://login.crm.example/token")
        #expect(server.app.respond(.put, "/v1/admin/providers/crm", token: server.adminToken, body: moved).status == 200)
        let read = server.app.respond(.get, "/v1/tokens/crm-api/refresh", token: server.adminToken)
        #expect(read.json["tokenEndpoint"] == .string("https://login.crm.example/token") && read.json["clientAuth"] == .string("basic"))

        #expect(server.app.respond(.delete, "/v1/tokens/crm-api/refresh", token: server.adminToken).status == 200)
        let stillOne = server.app.respond(.delete, "/v1/admin/providers/crm", token: server.adminToken)
        #expect(stillOne.json["detail"] == .string(
            #"provider "crm" is named by 1 refresh setting; remove or replace it first (DELETE or PUT /v1/tokens/{service}/refresh)"#))
        // Replaced by a setting of its own: the provider is free.
        let own = #"{"tokenEndpoint":"https://crm.example/token","grant":"refresh_token","clientId":"a","clientSecret":"b"}"#
        #expect(server.app.respond(.put, "/v1/tokens/crm-other/refresh", token: server.adminToken, body: own).status == 200)
        #expect(server.app.respond(.delete, "/v1/admin/providers/crm", token: server.adminToken).status == 200)
    }
}
