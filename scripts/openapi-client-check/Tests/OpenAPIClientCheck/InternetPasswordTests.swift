import Foundation
import Testing

/// internetPassword through the generated client: its own primary key (server, protocol, port,
/// path...), both ways of giving the secret, every return shape, updates and deletes.
@Suite struct InternetPasswordTests {
    @Test func addFindUpdateDelete() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let api = try await server.newClient(named: "web", accessGroups: ["web"])

        let login = try #require(
            try await api.addInternetPassword(
                body: .json(.InternetPasswordNewText(.init(
                    account: "alice", server: "example.com", _protocol: .https, authenticationType: .htmlForm, port: 443,
                    path: "/login", value: "correct horse")))
            ).created.body.json.item)
        #expect(login.server == "example.com" && login._protocol == .https && login.authenticationType == .htmlForm)
        #expect(login.port == 443 && login.path == "/login" && login.account == "alice")
        let loginRef = try #require(login.persistentRef)
        let key = Data("ssh key bytes".utf8).base64EncodedString()
        let deploy = try #require(
            try await api.addInternetPassword(
                body: .json(.InternetPasswordNewData(.init(
                    account: "deploy", server: "example.com", _protocol: .ssh, port: 22, data: key,
                    _return: "attributes,data")))
            ).created.body.json.item)
        #expect(deploy._protocol == .ssh && deploy.data == key && deploy.value == "ssh key bytes")
        let deployRef = try #require(deploy.persistentRef)

        let data = try #require(
            try await api.findInternetPassword(query: .init(server: "example.com", _protocol: .https, _return: "data"))
                .ok.body.json.one)
        #expect(data.value == "correct horse" && data.data == Fixtures.base64("correct horse") && data.server == nil)
        let ref = try #require(
            try await api.findInternetPassword(query: .init(_protocol: .ssh, _return: "ref")).ok.body.json.one)
        #expect(ref.persistentRef == deployRef && ref.account == nil)
        #expect(try await api.findInternetPassword(query: .init(port: 22, _return: "none")).ok.body.json.isStatusOnly)
        let all = try #require(
            try await api.findInternetPassword(query: .init(server: "example.com", limit: "all")).ok.body.json.many)
        #expect(Set(all.items.compactMap(\.port)) == [22, 443] && all.next == nil)
        #expect(try await api.getInternetPasswordByRef(path: .init(persistentRef: loginRef)).ok.body.json.one == login)

        let moved = try await api.updateInternetPassword(
            query: .init(server: "example.com", _protocol: .https), body: .json(.InternetPasswordChangesData(.init(port: 8443)))
        ).ok.body.json
        #expect(moved.updated == 1)
        let rotated = try await api.updateInternetPasswordByRef(
            path: .init(persistentRef: loginRef), body: .json(.InternetPasswordChangesText(.init(value: "battery staple")))
        ).ok.body.json
        #expect(rotated.updated == 1)
        let after = try #require(
            try await api.getInternetPasswordByRef(path: .init(persistentRef: loginRef), query: .init(_return: "attributes,data"))
                .ok.body.json.one)
        #expect(after.port == 8443 && after.value == "battery staple" && after.path == "/login")

        #expect(try await api.deleteInternetPasswordByRef(path: .init(persistentRef: deployRef)).ok.body.json.deleted == 1)
        #expect(try await api.deleteInternetPassword(query: .init(server: "example.com")).ok.body.json.deleted == 1)
        let none = try await api.findInternetPassword(query: .init(server: "example.com"))
        expectError(try none.notFound.body.json.answer, "errSecItemNotFound", -25300)
    }
}
