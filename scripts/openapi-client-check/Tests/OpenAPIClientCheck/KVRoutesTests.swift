import Foundation
import OpenAPIRuntime
import Testing

/// A client's access group as a KV version 2 mount through the generated client: writes with and
/// without check-and-set, reads of the current version and of one by number, a merge patch,
/// Vault's LIST as `?list=true`, the metadata written and read, versions deleted, undeleted and
/// destroyed, the mount's config, the secret removed; a service's tokens stored by `putTokens`
/// and read at `tokens/<service>`; another mount is 403.
@Suite struct KVRoutesTests {
    @Test func aSecretsLife() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let api = try await server.newClient(named: "kv", accessGroups: ["team"])
        let secret = Operations.ReadKVSecret.Input.Path(mount: "team", path: "app/db")

        let first = try await api.writeKVSecret(
            path: .init(mount: "team", path: "app/db"),
            body: .json(.init(data: try data(["password": "one"]), options: .init(cas: .case1(0))))
        ).ok.body.json
        #expect(first.data.version == 1 && first.data.deletionTime == "" && !first.data.destroyed && first.warnings == nil)
        let mismatch = try await api.writeKVSecret(
            path: .init(mount: "team", path: "app/db"),
            body: .json(.init(data: try data(["password": "x"]), options: .init(cas: .case1(0))))
        ).badRequest.body.json
        #expect(mismatch.errors == ["check-and-set parameter did not match the current version"])
        let second = try await api.writeKVSecretPut(
            path: .init(mount: "team", path: "app/db"), body: .json(.init(data: try data(["password": "two", "user": "app"])))
        ).ok.body.json
        #expect(second.data.version == 2)

        let current = try await api.readKVSecret(path: secret).ok.body.json
        #expect(try strings(current.data.data) == ["password": "two", "user": "app"] && current.data.metadata.version == 2)
        #expect(current.leaseDuration == 0 && current.data.metadata.customMetadata == nil)
        let one = try await api.readKVSecret(path: secret, query: .init(version: 1)).ok.body.json
        #expect(try strings(one.data.data) == ["password": "one"])

        let patched = try await api.patchKVSecret(
            path: .init(mount: "team", path: "app/db"),
            body: .applicationMergePatchJson(.init(data: try data(["password": "three", "user": nil])))
        ).ok.body.json
        #expect(patched.data.version == 3)
        #expect(try strings(try await api.readKVSecret(path: secret).ok.body.json.data.data) == ["password": "three"])

        // Vault's LIST: the root names the folder, the folder its secret.
        for (folder, keys) in [("", ["app/"]), ("app", ["db"]), ("app/", ["db"])] {
            let listed = try await api.readKVMetadata(path: .init(mount: "team", path: folder), query: .init(list: "true"))
            guard case .KVKeys(let answer) = try listed.ok.body.json else {
                Issue.record("LIST \(folder) did not answer keys")
                continue
            }
            #expect(answer.data.keys == keys, "\(folder)")
        }
        let empty = try await api.readKVMetadata(path: .init(mount: "team", path: "nothing/"), query: .init(list: "true"))
        #expect(try empty.notFound.body.json.errors.isEmpty)

        _ = try await api.writeKVMetadata(
            path: .init(mount: "team", path: "app/db"),
            body: .json(.init(maxVersions: .case1(5), deleteVersionAfter: .case2("0s"), customMetadata: .init(additionalProperties: ["owner": "payments"])))
        ).noContent
        _ = try await api.writeKVMetadataPut(path: .init(mount: "team", path: "app/db"), body: .json(.init(casRequired: .case1(true)))).noContent
        let required = try await api.writeKVSecret(
            path: .init(mount: "team", path: "app/db"), body: .json(.init(data: try data(["password": "x"])))
        ).badRequest.body.json
        #expect(required.errors == ["check-and-set parameter required for this call"])
        _ = try await api.patchKVMetadata(
            path: .init(mount: "team", path: "app/db"), body: .applicationMergePatchJson(.init(casRequired: .case2(._false)))
        ).noContent
        guard case .KVMetadata(let metadata) = try await api.readKVMetadata(path: .init(mount: "team", path: "app/db")).ok.body.json
        else {
            Issue.record("the metadata read did not answer metadata")
            return
        }
        #expect(metadata.data.currentVersion == 3 && metadata.data.maxVersions == 5 && !metadata.data.casRequired)
        #expect(metadata.data.currentMetadataVersion == 3 && metadata.data.deleteVersionAfter == "0s")
        #expect(metadata.data.customMetadata?.additionalProperties == ["owner": "payments"])
        #expect(metadata.data.versions.additionalProperties.keys.sorted() == ["1", "2", "3"])

        // Soft delete, undelete and destroy.
        _ = try await api.deleteKVSecretCurrent(path: .init(mount: "team", path: "app/db")).noContent
        guard case .KVSecret(let deleted) = try await api.readKVSecret(path: secret).notFound.body.json else {
            Issue.record("a deleted version's read did not answer its metadata")
            return
        }
        #expect(deleted.data.data == nil && deleted.data.metadata.deletionTime != "")
        _ = try await api.undeleteKVVersions(path: .init(mount: "team", path: "app/db"), body: .json(.init(versions: .case1([.case1(3)])))).noContent
        #expect(try await api.readKVSecret(path: secret).ok.body.json.data.metadata.version == 3)
        _ = try await api.destroyKVVersions(path: .init(mount: "team", path: "app/db"), body: .json(.init(versions: .case2(1)))).noContent
        guard case .KVSecret(let destroyed) = try await api.readKVSecret(path: secret, query: .init(version: 1)).notFound.body.json else {
            Issue.record("a destroyed version's read did not answer its metadata")
            return
        }
        #expect(destroyed.data.metadata.destroyed && destroyed.data.data == nil)
        _ = try await api.deleteKVVersions(path: .init(mount: "team", path: "app/db"), body: .json(.init(versions: .case3("2")))).noContent
        _ = try await api.undeleteKVVersionsPut(path: .init(mount: "team", path: "app/db"), body: .json(.init(versions: .case3("2")))).noContent
        #expect(try strings(try await api.readKVSecret(path: secret, query: .init(version: 2)).ok.body.json.data.data)["user"] == "app")
        _ = try await api.deleteKVVersionsPut(path: .init(mount: "team", path: "app/db"), body: .json(.init(versions: .case1([.case2("2")])))).noContent
        _ = try await api.destroyKVVersionsPut(path: .init(mount: "team", path: "app/db"), body: .json(.init(versions: .case2(2)))).noContent

        let config = try await api.readKVConfig(path: .init(mount: "team")).ok.body.json
        #expect(config.data.maxVersions == 0 && config.data.deleteVersionAfter == "0s")

        _ = try await api.deleteKVMetadata(path: .init(mount: "team", path: "app/db")).noContent
        #expect(try await api.readKVMetadata(path: .init(mount: "team", path: "app/db")).notFound.body.json.errors.isEmpty)
        let elsewhere = try await api.readKVSecret(path: .init(mount: "elsewhere", path: "app/db")).forbidden.body.json
        #expect(elsewhere.errors == ["permission denied"])
    }

    @Test func aServicesTokensAsASecret() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let api = try await server.newClient(named: "kv", accessGroups: ["team"])
        _ = try await api.putTokens(
            path: .init(service: "api.example.com"),
            body: .json(.TokenUpdateExpiresIn(.init(accessToken: "eyJ.first", refreshToken: "refresh-1", expiresIn: 3600)))
        ).ok
        let tokens = Operations.ReadKVSecret.Input.Path(mount: "team", path: "tokens/api.example.com")
        let read = try await api.readKVSecret(path: tokens).ok.body.json
        let stored = try strings(read.data.data)
        #expect(stored["access_token"] == "eyJ.first" && stored["authorization"] == "Bearer eyJ.first")
        #expect(stored["refresh_token"] == "refresh-1" && stored["expires_at"] != nil)
        #expect(read.leaseDuration > 3400 && read.leaseDuration <= 3540 && read.data.metadata.version == 1)

        let written = try await api.writeKVSecret(
            path: .init(mount: "team", path: "tokens/api.example.com"),
            body: .json(.init(data: try data(["access_token": "eyJ.second", "expires_in": "120"])))
        ).ok.body.json
        #expect(written.data.version == 2)
        #expect(try await api.getAuthorization(path: .init(service: "api.example.com")).ok.body.json.authorization == "Bearer eyJ.second")
        let listed = try await api.readKVMetadata(path: .init(mount: "team", path: "tokens/"), query: .init(list: "true"))
        guard case .KVKeys(let services) = try listed.ok.body.json else {
            Issue.record("LIST tokens/ did not answer keys")
            return
        }
        #expect(services.data.keys == ["api.example.com"])
        let versioned = try await api.deleteKVSecretCurrent(path: .init(mount: "team", path: "tokens/api.example.com"))
        #expect(try versioned.badRequest.body.json.errors == ["tokens/ paths are not versioned"])
    }

    /// A JSON object of strings (and nulls, which a merge patch uses to remove a key).
    private func data(_ members: [String: String?]) throws -> OpenAPIObjectContainer {
        try OpenAPIObjectContainer(unvalidatedValue: members.mapValues { $0 as (any Sendable)? })
    }

    /// A secret's data read back as strings.
    private func strings(_ data: OpenAPIObjectContainer?) throws -> [String: String] {
        try #require(data).value.compactMapValues { $0 as? String }
    }
}
