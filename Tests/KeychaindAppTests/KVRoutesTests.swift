import Foundation
import KeychainAPI
import KeychainConfig
import KeychainCore
import KeychaindTesting
import KeychainHTTP
import Testing

/// The KV version 2 mounts over the app as keychaind serves it (SQLite in a temporary
/// directory): OpenBao's answers for reads, writes, check-and-set, versions, metadata and lists;
/// the mounts a caller reaches; a KV secret seen as an item; a service's tokens as a secret.
@Suite struct KVRoutesTests {
    let server: TestServer
    let token: String

    init() throws {
        server = try TestServer()
        token = try server.client("app", groups: ["team", "shared"])
    }

    /// A call as Vault's tools make it: the token in `X-Vault-Token`.
    func vault(
        _ method: HTTPMethod, _ target: String, body: String? = nil, token: String? = nil, contentType: String? = nil
    ) -> Answer {
        var headers: [(name: String, value: String)] = [("X-Vault-Token", token ?? self.token)]
        if let contentType { headers.append(("Content-Type", contentType)) }
        let response = server.app.respond(method, target, body: body, headers: headers)
        return Answer(status: response.status, json: response.json)
    }

    private func integer(_ value: JSONValue?) -> Int64? {
        if case .integer(let number)? = value { return number }
        return nil
    }

    @Test func writeReadAndVersionsAsOpenBaoAnswers() throws {
        let written = vault(.post, "/v1/team/data/db/primary", body: #"{"data":{"password":"one"},"extra":1}"#)
        #expect(written.status == 200)
        #expect(integer(written.json["data"]?["version"]) == 1)
        #expect(written.json["data"]?["deletion_time"] == .string("") && written.json["data"]?["destroyed"] == .bool(false))
        #expect(written.json["warnings"] == .array([.string("Endpoint ignored these unrecognized parameters: [extra]")]))
        for key in ["request_id", "lease_id", "renewable", "lease_duration", "wrap_info", "auth"] {
            #expect(written.json[key] != nil, "no \(key)")
        }
        let requestID = try #require(written.json["request_id"]?.stringValue)
        #expect(requestID.utf8.count == 36 && requestID.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
        #expect(requestID.allSatisfy { $0 == "-" || $0.isHexDigit && !$0.isUppercase })
        #expect(requestID != vault(.get, "/v1/team/data/db/primary").json["request_id"]?.stringValue)
        #expect(vault(.put, "/v1/team/data/db/primary", body: #"{"data":{"password":"two"}}"#).status == 200)

        let read = vault(.get, "/v1/team/data/db/primary")
        #expect(read.status == 200)
        #expect(read.json["data"]?["data"] == .object([("password", .string("two"))]))
        #expect(integer(read.json["data"]?["metadata"]?["version"]) == 2)
        #expect(read.json["data"]?["metadata"]?["custom_metadata"] == .null)
        let first = vault(.get, "/v1/team/data/db/primary?version=1")
        #expect(first.json["data"]?["data"] == .object([("password", .string("one"))]))

        let missing = vault(.get, "/v1/team/data/db/nothing")
        #expect(missing.status == 404 && missing.json == .object([("errors", .array([]))]))
        #expect(vault(.post, "/v1/team/data/db/x", body: #"{"nodata":1}"#).status == 400)
    }

    @Test func checkAndSetAnswersVaultsErrors() throws {
        #expect(vault(.post, "/v1/team/data/c", body: #"{"data":{"a":"1"},"options":{"cas":0}}"#).status == 200)
        let mismatch = vault(.post, "/v1/team/data/c", body: #"{"data":{"a":"2"},"options":{"cas":0}}"#)
        #expect(mismatch.status == 400)
        #expect(mismatch.json["errors"] == .array([.string("check-and-set parameter did not match the current version")]))
        #expect(vault(.post, "/v1/team/metadata/c", body: #"{"cas_required":true}"#).status == 204)
        let required = vault(.post, "/v1/team/data/c", body: #"{"data":{"a":"2"}}"#)
        #expect(required.status == 400)
        #expect(required.json["errors"] == .array([.string("check-and-set parameter required for this call")]))
        #expect(vault(.post, "/v1/team/data/c", body: #"{"data":{"a":"2"},"options":{"cas":1}}"#).status == 200)
    }

    @Test func softDeleteUndeleteDestroyAndMetadata() throws {
        _ = vault(.post, "/v1/team/data/s", body: #"{"data":{"v":"1"}}"#)
        _ = vault(.post, "/v1/team/data/s", body: #"{"data":{"v":"2"}}"#)
        #expect(vault(.delete, "/v1/team/data/s").status == 204)
        let deleted = vault(.get, "/v1/team/data/s")
        #expect(deleted.status == 404 && deleted.json["data"]?["data"] == .null)
        #expect(deleted.json["data"]?["metadata"]?["deletion_time"] != .string(""))
        #expect(vault(.post, "/v1/team/undelete/s", body: #"{"versions":[2]}"#).status == 204)
        #expect(vault(.get, "/v1/team/data/s").status == 200)
        #expect(vault(.put, "/v1/team/destroy/s", body: #"{"versions":[1]}"#).status == 204)
        #expect(vault(.get, "/v1/team/data/s?version=1").json["data"]?["metadata"]?["destroyed"] == .bool(true))

        let settings = #"{"max_versions":5,"delete_version_after":"1h","custom_metadata":{"owner":"gus"}}"#
        #expect(vault(.post, "/v1/team/metadata/s", body: settings).status == 204)
        let metadata = vault(.get, "/v1/team/metadata/s")
        #expect(metadata.status == 200)
        let data = try #require(metadata.json["data"])
        #expect(integer(data["max_versions"]) == 5 && data["delete_version_after"] == .string("1h0m0s"))
        #expect(data["custom_metadata"] == .object([("owner", .string("gus"))]))
        #expect(integer(data["current_version"]) == 2 && integer(data["current_metadata_version"]) == 1)
        #expect(data["versions"]?["1"]?["destroyed"] == .bool(true))
        #expect(vault(.delete, "/v1/team/metadata/s").status == 204)
        #expect(vault(.get, "/v1/team/metadata/s").status == 404)
    }

    @Test func patchIsAJSONMergeWithItsContentType() throws {
        _ = vault(.post, "/v1/team/data/p", body: #"{"data":{"user":"gus","password":"x"}}"#)
        let wrongType = vault(.patch, "/v1/team/data/p", body: #"{"data":{"password":"y"}}"#, contentType: "application/json")
        #expect(wrongType.status == 415)
        let patched = vault(
            .patch, "/v1/team/data/p", body: #"{"data":{"password":"y","user":null}}"#,
            contentType: "application/merge-patch+json")
        #expect(patched.status == 200 && integer(patched.json["data"]?["version"]) == 2)
        #expect(vault(.get, "/v1/team/data/p").json["data"]?["data"] == .object([("password", .string("y"))]))
        let none = vault(.patch, "/v1/team/data/none", body: #"{"data":{}}"#, contentType: "application/merge-patch+json")
        #expect(none.status == 404)
    }

    @Test func listsWholeFoldersOneLevelDeep() throws {
        for path in ["a", "b/c", "b/d/e"] { _ = vault(.post, "/v1/team/data/\(path)", body: #"{"data":{}}"#) }
        let root = vault(.list, "/v1/team/metadata/")
        #expect(root.json["data"]?["keys"] == .array([.string("a"), .string("b/")]))
        #expect(vault(.get, "/v1/team/metadata/b?list=true").json["data"]?["keys"] == .array([.string("c"), .string("d/")]))
        let missing = vault(.list, "/v1/team/metadata/zzz/")
        #expect(missing.status == 404 && missing.json == .object([("errors", .array([]))]))
    }

    @Test func aCallerReachesItsOwnMountsOnly() throws {
        _ = try server.client("stranger", groups: ["elsewhere"])
        for target in ["/v1/elsewhere/data/x", "/v1/nothing/data/x", "/v1/items/data/x/y", "/v1/keychaind.refresh/data/x"] {
            let answer = vault(.get, target)
            #expect(answer.status == 403, "\(target)")
            #expect(answer.json["errors"] == .array([.string("permission denied")]), "\(target)")
        }
        let badToken = vault(.get, "/v1/team/data/x", token: "kc_not-a-token")
        #expect(badToken.status == 403 && badToken.json["errors"] == .array([.string("permission denied")]))
    }

    @Test func aKVSecretIsAnItem() throws {
        _ = vault(.post, "/v1/team/data/app/db", body: #"{"data":{"password":"p1"}}"#)
        let item = server.send(.get, "/v1/items/genericPassword?service=app%2Fdb&return=data", token: token)
        #expect(item.status == 200)
        #expect(item.json["item"]?["value"] == .string(#"{"password":"p1"}"#))

        let update = server.send(
            .patch, "/v1/items/genericPassword?service=app%2Fdb", token: token,
            body: #"{"data":"\#(Base64.encode(Array(#"{"password":"p2"}"#.utf8)))"}"#)
        #expect(update.status == 200)
        #expect(integer(vault(.get, "/v1/team/data/app/db").json["data"]?["metadata"]?["version"]) == 2)
        let notJSON = server.send(
            .patch, "/v1/items/genericPassword?service=app%2Fdb", token: token,
            body: #"{"data":"\#(Base64.encode(Array("plain".utf8)))"}"#)
        #expect(notJSON.status == 400)

        let marker = Base64.encode(Array("keychaind.kv".utf8))
        let forged = server.send(
            .post, "/v1/items/genericPassword", token: token, body: #"{"service":"forged","generic":"\#(marker)","data":""}"#)
        #expect(forged.status == 400)

        // A path an item that is no KV secret holds is refused, by a data write and a metadata write alike.
        let plain = server.send(.post, "/v1/items/genericPassword", token: token, body: #"{"service":"plain","account":"","value":"v"}"#)
        #expect(plain.status == 201)
        for (target, body) in [("/v1/team/data/plain", #"{"data":{"a":"1"}}"#), ("/v1/team/metadata/plain", #"{"max_versions":3}"#)] {
            let taken = vault(.post, target, body: body)
            #expect(taken.status == 400, "\(target)")
            #expect(taken.json["errors"] == .array([.string(KVRefusal.pathTaken.message)]), "\(target)")
        }

        #expect(server.send(.delete, "/v1/items/genericPassword?service=app%2Fdb", token: token).status == 200)
        #expect(vault(.get, "/v1/team/metadata/app/db").status == 404)
    }

    @Test func aServicesTokensReadAsASecret() throws {
        let stored = server.send(
            .put, "/v1/tokens/github?accessGroup=team", token: token,
            body: #"{"accessToken":"gho_one","refreshToken":"ghr_one","expiresIn":3600}"#)
        #expect(stored.status == 200)
        let read = vault(.get, "/v1/team/data/tokens/github")
        #expect(read.status == 200)
        let data = try #require(read.json["data"]?["data"])
        #expect(data["access_token"] == .string("gho_one") && data["authorization"] == .string("Bearer gho_one"))
        #expect(data["refresh_token"] == .string("ghr_one") && data["expires_at"]?.stringValue != nil)
        let lease = try #require(integer(read.json["lease_duration"]))
        #expect(lease > 3400 && lease <= 3540)
        #expect(read.json["renewable"] == .bool(false))
        #expect(integer(read.json["data"]?["metadata"]?["version"]) == 1)

        let written = vault(.post, "/v1/team/data/tokens/github", body: #"{"data":{"access_token":"gho_two","expires_in":"120"}}"#)
        #expect(written.status == 200 && integer(written.json["data"]?["version"]) == 2)
        let again = vault(.get, "/v1/team/data/tokens/github")
        #expect(again.json["data"]?["data"]?["refresh_token"] == .string("ghr_one"))
        #expect(integer(again.json["lease_duration"]).map { $0 >= 1 && $0 <= 60 } == true)
        #expect(server.send(.get, "/v1/tokens/github/authorization?accessGroup=team", token: token).json["Authorization"] == .string("Bearer gho_two"))

        _ = server.send(.put, "/v1/tokens/api?user=gus&accessGroup=team", token: token, body: #"{"accessToken":"u1"}"#)
        #expect(vault(.get, "/v1/team/data/tokens/api/gus").json["data"]?["data"]?["access_token"] == .string("u1"))
        #expect(integer(vault(.get, "/v1/team/data/tokens/api/gus").json["lease_duration"]) == 0)
        #expect(vault(.list, "/v1/team/metadata/tokens/").json["data"]?["keys"] == .array([.string("api/"), .string("github")]))
        #expect(vault(.list, "/v1/team/metadata/tokens/api/").json["data"]?["keys"] == .array([.string("gus")]))
        #expect(vault(.list, "/v1/team/metadata/").json["data"]?["keys"] == .array([.string("tokens/")]))

        for (method, target, body) in [
            (HTTPMethod.delete, "/v1/team/data/tokens/github", nil),
            (.post, "/v1/team/delete/tokens/github", #"{"versions":[1]}"#),
            (.post, "/v1/team/destroy/tokens/github", #"{"versions":[1]}"#),
            (.post, "/v1/team/metadata/tokens/github", #"{"max_versions":1}"#),
            (.post, "/v1/team/data/tokens/github", #"{"data":{"access_token":"x"},"options":{"cas":2}}"#),
        ] as [(HTTPMethod, String, String?)] {
            let refused = vault(method, target, body: body)
            #expect(refused.status == 400, "\(method) \(target)")
            #expect(refused.json["errors"] == .array([.string("tokens/ paths are not versioned")]), "\(method) \(target)")
        }
        #expect(vault(.post, "/v1/team/data/tokens/github", body: #"{"data":{"access_token":"x","scope":"y"}}"#).status == 400)
        #expect(vault(.get, "/v1/team/data/tokens/nothing").status == 404)
    }

    @Test func aFolderTooLargeForOneAnswerIsRefusedWhole() throws {
        let small = try TestServer(TestApp { $0.maxAnswerBytes = 65_536 })
        let token = try small.client("big", groups: ["big"])
        let name = String(repeating: "n", count: 2_000)
        for index in 0..<34 {
            let written = small.app.respond(
                .post, "/v1/big/data/\(name)\(index)", body: #"{"data":{}}"#, headers: [("X-Vault-Token", token)])
            #expect(written.status == 200)
        }
        let listed = small.app.respond(.list, "/v1/big/metadata/", headers: [("X-Vault-Token", token)])
        #expect(listed.status == 500)
        #expect(listed.json == .object([("errors", .array([.string("list too large")]))]))
    }

    @Test func aLockedVaultIsSealedOnEveryKVAndTokensRoute() throws {
        _ = vault(.post, "/v1/team/data/x", body: #"{"data":{"a":"b"}}"#)
        _ = server.send(.put, "/v1/tokens/github?accessGroup=team", token: token, body: #"{"accessToken":"t"}"#)
        #expect(server.send(.post, "/v1/admin/lock", token: server.adminToken).status == 200)
        for (method, target, body) in [
            (HTTPMethod.get, "/v1/team/data/x", nil), (.post, "/v1/team/data/x", #"{"data":{}}"#),
            (.get, "/v1/team/data/nothing", nil), (.list, "/v1/team/metadata/", nil), (.get, "/v1/team/metadata/x", nil),
            (.delete, "/v1/team/data/x", nil), (.get, "/v1/team/data/tokens/github", nil),
            (.post, "/v1/team/data/tokens/github", #"{"data":{"access_token":"u"}}"#),
        ] as [(HTTPMethod, String, String?)] {
            let answer = vault(method, target, body: body)
            #expect(answer.status == 503, "\(method) \(target)")
            #expect(answer.json == .object([("errors", .array([.string("Vault is sealed")]))]), "\(method) \(target)")
        }
    }

    @Test func everyVersionCountsAgainstTheGroupsQuota() throws {
        let small = try TestServer(TestApp { $0.quotaSecretBytes = 100 })
        let token = try small.client("q", groups: ["q"])
        let body = #"{"data":{"v":"\#(String(repeating: "x", count: 30))"}}"#
        let call = { (method: HTTPMethod, target: String, body: String?) in
            small.app.respond(method, target, body: body, headers: [("X-Vault-Token", token)])
        }
        // The item holds the current version's 38 bytes, the history every version's.
        #expect(call(.post, "/v1/q/data/a", body).status == 200)
        let refused = call(.post, "/v1/q/data/a", body)
        #expect(refused.status == 400)
        guard case .array(let errors)? = refused.json["errors"], errors.count == 1, let message = errors[0].stringValue else {
            Issue.record("no error message: \(refused.json)")
            return
        }
        #expect(message.contains("quota"), "\(message)")
        #expect(call(.get, "/v1/q/metadata/a", nil).json["data"]?["current_version"] == .integer(1))
    }

    @Test func aMethodAVaultPathDoesNotServeIsVaults405() throws {
        for (method, target) in [(HTTPMethod.post, "/v1/team/config"), (.put, "/v1/sys/health")] {
            let answer = server.app.respond(method, target, headers: [("X-Vault-Token", token)])
            #expect(answer.status == 405, "\(method) \(target)")
            #expect(answer.json == .object([("errors", .array([]))]), "\(method) \(target)")
            #expect(answer.headers.contains { $0.name == "Allow" && $0.value.contains("GET") })
        }
        // A native path keeps keychaind's shape.
        let native = server.app.respond(.put, "/v1/health", headers: [("X-Vault-Token", token)])
        #expect(native.status == 405 && native.json["error"] == .string("errSecUnimplemented"))
    }
}
