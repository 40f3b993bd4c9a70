import Foundation
import KeychainAPI
import KeychainCore
import KeychaindTesting
import KeychainHTTP
import Testing

/// The connect routes over the app as keychaind serves it, in process: a wait on the calling
/// thread (`ExchangeWait.block`: the responder waits, bounded, and never defers), the first hop's
/// cookie and redirect under an https public URL, and the session seen by its group only.
@Suite struct ConnectRoutesTests {
    static let provider =
        #"{"authorizationEndpoint":"https://accounts.example/o/authorize?hd=example.com","tokenEndpoint":"https://accounts.example/token","#
        + #""clientId":"cal","clientSecret":"s3cret","scopes":["openid","calendar.read"],"authorizationParams":{"prompt":"consent"},"#
        + #""accessGroups":["team"]}"#

    static func app() throws -> (TestApp, client: String, outsider: String) {
        let app = try TestApp(environment: ["KEYCHAIND_SERVER_PUBLIC_URL": "https://vault.example.com"])
        #expect(app.respond(.put, "/v1/admin/providers/calendar", token: app.adminToken, body: provider).status == 200)
        func client(_ name: String, _ group: String) -> String {
            let created = app.respond(
                .post, "/v1/admin/clients", token: app.adminToken, body: #"{"name":"\#(name)","accessGroups":["\#(group)"]}"#)
            return created.json["token"]?.stringValue ?? ""
        }
        return (app, client("app", "team"), client("outsider", "other"))
    }

    @Test func aWaitInProcessReturnsAtItsLimitWithTheSessionPending() throws {
        let (app, client, outsider) = try Self.app()
        defer { app.stop() }
        let started = app.respond(.post, "/v1/connect", token: client, body: #"{"provider":"calendar","service":"cal.example"}"#)
        #expect(started.status == 201, "\(started.text)")
        let id = try #require(started.json["connectId"]?.stringValue)
        #expect(started.json["authorizationURL"]?.stringValue == "https://vault.example.com/v1/connect/\(id)/go")
        let before = Date()
        let waited = app.respond(.get, "/v1/connect/\(id)?wait=1", token: client)
        #expect(waited.status == 200 && waited.json["state"] == .string("pending"), "\(waited.text)")
        #expect(Date().timeIntervalSince(before) >= 0.9, "the thread waited for the session")
        #expect(app.respond(.get, "/v1/connect/\(id)?wait=-1", token: client).status == 400)
        #expect(app.respond(.get, "/v1/connect/\(id)", token: outsider).status == 404)
    }

    @Test func theFirstHopSetsAHostCookieAndRedirectsWithPKCE() throws {
        let (app, client, _) = try Self.app()
        defer { app.stop() }
        let started = app.respond(.post, "/v1/connect", token: client, body: #"{"provider":"calendar","service":"cal.example"}"#)
        let id = try #require(started.json["connectId"]?.stringValue)
        let go = app.respond(.get, "/v1/connect/\(id)/go")
        #expect(go.status == 303)
        let cookie = try #require(go.headers.first { $0.name == "Set-Cookie" }?.value)
        #expect(cookie.hasPrefix("__Host-keychaind-connect="))
        for attribute in ["Path=/", "HttpOnly", "SameSite=Lax", "Secure", "Max-Age=600"] {
            #expect(cookie.contains("; \(attribute)"), "\(cookie)")
        }
        let location = try #require(go.headers.first { $0.name == "Location" }?.value)
        #expect(location.hasPrefix("https://accounts.example/o/authorize?hd=example.com&response_type=code&client_id=cal&"))
        let query = Dictionary(
            uniqueKeysWithValues: (URLComponents(string: location)?.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        #expect(query["redirect_uri"] == "https://vault.example.com/v1/oauth/callback")
        #expect(query["code_challenge_method"] == "S256" && query["code_challenge"]?.count == 43)
        #expect(query["scope"] == "openid calendar.read" && query["prompt"] == "consent")
        #expect(query["state"]?.count == 43 && query["state"] != id)

        // The same browser (its cookie) may hop again: a new state; another browser may not.
        let again = app.respond(.get, "/v1/connect/\(id)/go", headers: [("Cookie", String(cookie.prefix { $0 != ";" }))])
        #expect(again.status == 303 && again.headers.first { $0.name == "Set-Cookie" } != nil)
        let againState = URLComponents(string: again.headers.first { $0.name == "Location" }?.value ?? "")?
            .queryItems?.first { $0.name == "state" }?.value
        #expect(againState != nil && againState != query["state"])
        let other = app.respond(.get, "/v1/connect/\(id)/go", headers: [("Cookie", "__Host-keychaind-connect=" + String(repeating: "B", count: 43))])
        #expect(other.status == 400)
        #expect(other.headers.contains { $0.name == "Content-Security-Policy" && $0.value == "default-src 'none'; frame-ancestors 'none'" })
        #expect(app.respond(.get, "/v1/connect/\(id)", token: client).json["state"] == .string("pending"))
    }
}
