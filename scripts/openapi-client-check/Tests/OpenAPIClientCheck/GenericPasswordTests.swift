import Foundation
import Testing

/// genericPassword through the generated client: both ways of giving the secret, every return
/// shape and limit, pages, updates by query and by reference, the documented errors.
@Suite struct GenericPasswordTests {
    @Test func addFindUpdateDelete() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let api = try await server.newClient(named: "billing", accessGroups: ["billing", "shared"])

        // SecItemAdd, the secret as text: the answer is the stored attributes and reference.
        let alice = try #require(
            try await api.addGenericPassword(
                body: .json(.GenericPasswordNewText(.init(
                    label: "Alice", account: "alice", service: "api.example.com", value: "s3cr3t")))
            ).created.body.json.item)
        #expect(alice.service == "api.example.com")
        #expect(alice.account == "alice")
        #expect(alice.label == "Alice")
        #expect(alice.accessGroup == "billing")
        #expect(alice.accessible == .whenUnlocked)
        #expect(alice.synchronizable == false)
        #expect(alice.data == nil && alice.value == nil)
        let aliceRef = try #require(alice.persistentRef)
        let created = try #require(alice.creationDate)
        #expect(abs(created.timeIntervalSinceNow) < 60)
        #expect(alice.modificationDate == created)

        // The secret as bytes (not UTF-8: no `value` in answers), into the second group; and an
        // item without a secret.
        let bytes = Data([0x00, 0xFF, 0xFE, 0x01]).base64EncodedString()
        let bob = try await api.addGenericPassword(
            body: .json(.GenericPasswordNewData(.init(
                accessGroup: "shared", account: "bob", service: "api.example.com", data: bytes, _return: "ref")))
        ).created.body.json.item
        #expect(bob?.persistentRef != nil && bob?.account == nil)
        _ = try await api.addGenericPassword(
            body: .json(.GenericPasswordNewData(.init(account: "carol", service: "api.example.com")))
        ).created

        // Each return shape of limit one.
        let data = try #require(
            try await api.findGenericPassword(query: .init(account: "alice", _return: "data")).ok.body.json.one)
        #expect(data.data == Fixtures.base64("s3cr3t") && data.value == "s3cr3t")
        #expect(data.persistentRef == nil && data.account == nil)
        let bobData = try #require(
            try await api.findGenericPassword(query: .init(account: "bob", _return: "data")).ok.body.json.one)
        #expect(bobData.data == bytes && bobData.value == nil)
        let ref = try #require(
            try await api.findGenericPassword(query: .init(account: "alice", _return: "ref")).ok.body.json.one)
        #expect(ref.persistentRef == aliceRef && ref.service == nil && ref.data == nil)
        let both = try #require(
            try await api.findGenericPassword(query: .init(account: "alice", _return: "attributes,data,ref"))
                .ok.body.json.one)
        #expect(both.account == "alice" && both.value == "s3cr3t" && both.persistentRef == aliceRef)
        let attributes = try #require(
            try await api.findGenericPassword(query: .init(account: "alice")).ok.body.json.one)
        #expect(attributes == alice)
        #expect(try await api.findGenericPassword(query: .init(account: "carol", _return: "none")).ok.body.json.isStatusOnly)
        let anyCase = try await api.findGenericPassword(query: .init(account: "ALICE", caseInsensitive: true)).ok.body.json
        #expect(anyCase.one?.persistentRef == aliceRef)
        expectError(
            try await api.findGenericPassword(query: .init(account: "ALICE")).notFound.body.json.answer,
            "errSecItemNotFound", -25300)

        // limit all: every item, in the client's two groups; a group of its own only.
        let all = try #require(
            try await api.findGenericPassword(query: .init(service: "api.example.com", limit: "all")).ok.body.json.many)
        #expect(Set(all.items.compactMap(\.account)) == ["alice", "bob", "carol"])
        #expect(all.next == nil)
        let shared = try #require(
            try await api.findGenericPassword(query: .init(accessGroup: "shared", limit: "all")).ok.body.json.many)
        #expect(shared.items.map(\.account) == ["bob"])

        // limit N: at most N items.
        let two = try #require(
            try await api.findGenericPassword(query: .init(service: "api.example.com", limit: "2")).ok.body.json.many)
        #expect(two.items.count == 2 && two.next == nil)

        // By persistent reference.
        #expect(try await api.getGenericPasswordByRef(path: .init(persistentRef: aliceRef)).ok.body.json.one == alice)

        // SecItemUpdate by query (a new secret as text), then by reference (a label: the secret stays).
        let updated = try await api.updateGenericPassword(
            query: .init(account: "alice", service: "api.example.com"),
            body: .json(.GenericPasswordChangesText(.init(value: "rotated")))
        ).ok.body.json
        #expect(updated.updated == 1)
        let relabelled = try await api.updateGenericPasswordByRef(
            path: .init(persistentRef: aliceRef), body: .json(.GenericPasswordChangesData(.init(label: "Alice 2")))
        ).ok.body.json
        #expect(relabelled.updated == 1)
        let after = try #require(
            try await api.getGenericPasswordByRef(path: .init(persistentRef: aliceRef), query: .init(_return: "attributes,data"))
                .ok.body.json.one)
        #expect(after.label == "Alice 2" && after.value == "rotated")
        #expect(try #require(after.modificationDate) >= created)

        // Documented errors: a duplicate add, a DELETE naming nothing without all=true, a bad
        // cursor, then a deleted item.
        let duplicate = try await api.addGenericPassword(
            body: .json(.GenericPasswordNewText(.init(account: "alice", service: "api.example.com", value: "again"))))
        expectError(try duplicate.conflict.body.json, "errSecDuplicateItem", -25299)
        let unguarded = try await api.deleteGenericPassword(query: .init())
        expectError(try unguarded.badRequest.body.json.answer, "errSecParam", -50)
        let badCursor = try await api.findGenericPassword(query: .init(limit: "2", cursor: "not-a-cursor"))
        expectError(try badCursor.badRequest.body.json.answer, "errSecParam", -50)

        #expect(try await api.deleteGenericPasswordByRef(path: .init(persistentRef: aliceRef)).ok.body.json.deleted == 1)
        let gone = try await api.getGenericPasswordByRef(path: .init(persistentRef: aliceRef))
        expectError(try gone.notFound.body.json.answer, "errSecItemNotFound", -25300)
        #expect(try await api.deleteGenericPassword(query: .init(all: true)).ok.body.json.deleted == 2)
        let none = try await api.findGenericPassword(query: .init(service: "api.example.com"))
        expectError(try none.notFound.body.json.answer, "errSecItemNotFound", -25300)
    }

    /// A search answers at most 1000 items at a time, with `next`; the cursor gives the rest.
    @Test func pagesAreCutWithACursor() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let api = server.admin
        let count = 1001
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<8 {
                group.addTask {
                    for index in stride(from: lane, to: count, by: 8) {
                        _ = try await api.addGenericPassword(
                            body: .json(.GenericPasswordNewText(.init(
                                account: "account-\(index)", service: "paged.example.com", value: "\(index)", _return: "none")))
                        ).created
                    }
                }
            }
            try await group.waitForAll()
        }
        let first = try #require(
            try await api.findGenericPassword(query: .init(service: "paged.example.com", limit: "all", _return: "ref"))
                .ok.body.json.many)
        #expect(first.items.count == 1000)
        let cursor = try #require(first.next)
        let rest = try #require(
            try await api.findGenericPassword(
                query: .init(service: "paged.example.com", limit: "all", _return: "ref", cursor: cursor)
            ).ok.body.json.many)
        #expect(rest.items.count == 1 && rest.next == nil)
        #expect(Set((first.items + rest.items).compactMap(\.persistentRef)).count == count)
    }
}
