import Foundation
import KeychainAPI
import KeychainCore
import Testing

/// The answers' writers give docs/api.md's bytes, and the client's readers read them back.
struct AnswerTests {
    static let ref = PersistentRef("AAAAAAAAAAAAAAAAAAAAAA")!
    static let created = Date(timeIntervalSince1970: 1_795_255_200.123)

    static func item(secret: [UInt8]) -> FoundItem {
        FoundItem(
            item: Item(
                itemClass: .genericPassword, persistentRef: ref,
                attributes: [
                    .service: .string("svc"), .account: .string("me"), .creationDate: .date(created),
                    .synchronizable: .bool(false), .generic: .data([0, 1]),
                ],
                secret: SecretBytes(secret)))
    }

    static func text(_ answer: some JSONAnswer) -> String { String(decoding: answer.encoded(), as: UTF8.self) }

    @Test func healthNamesTheStorageOnlyOnPostgreSQL() {
        let version = KeychaindVersion.current
        #expect(Self.text(HealthAnswer(locked: false)) == #"{"status":"ok","locked":false,"version":"\#(version)"}"#)
        #expect(HealthAnswer(locked: false).isServing)
        let unreachable = HealthAnswer(locked: false, storage: StorageHealth(backend: .postgresql, reachable: false))
        #expect(!unreachable.isServing)
        #expect(Self.text(unreachable) == #"{"status":"unavailable","locked":false,"version":"\#(version)","storage":{"backend":"postgresql","reachable":false}}"#)
        let locked = HealthAnswer(locked: true, storage: StorageHealth(backend: .postgresql, reachable: true))
        #expect(!locked.isServing)
        #expect(Self.text(locked).hasPrefix(#"{"status":"locked","locked":true"#))
    }

    @Test func anItemReadAnswersDataAndValue() {
        #expect(Self.text(ItemAnswer(Self.item(secret: Array("read-me".utf8)), returning: .data))
            == #"{"status":0,"item":{"data":"cmVhZC1tZQ==","value":"read-me"}}"#)
        #expect(Self.text(ItemAnswer(Self.item(secret: [0xFF]), returning: .data)) == #"{"status":0,"item":{"data":"/w=="}}"#)
        #expect(Self.text(ItemAnswer(Self.item(secret: Array("a\"\n".utf8)), returning: .data))
            == #"{"status":0,"item":{"data":"YSIK","value":"a\"\n"}}"#)
        #expect(Self.text(ItemAnswer(Self.item(secret: []), returning: .none)) == #"{"status":0}"#)
    }

    @Test func attributesComeInCatalogueOrderThenTheReference() {
        #expect(Self.text(ItemAnswer(Self.item(secret: []), returning: [.attributes, .ref]))
            == #"{"status":0,"item":{"synchronizable":false,"creationDate":"2026-11-21T10:00:00.123Z","account":"me","service":"svc","generic":"AAE=","persistentRef":"AAAAAAAAAAAAAAAAAAAAAA"}}"#)
        #expect(Self.text(ItemAnswer(Self.item(secret: []), returning: .ref))
            == #"{"status":0,"item":{"persistentRef":"AAAAAAAAAAAAAAAAAAAAAA"}}"#)
    }

    @Test func aListCarriesItsCursor() throws {
        let next = PageCursor(token: "c2VhbGVk")
        let answer = ItemListAnswer(
            MatchResult(items: [Self.item(secret: Array("x".utf8)), Self.item(secret: [])], next: next), returning: .data)
        #expect(Self.text(answer)
            == #"{"status":0,"items":[{"data":"eA==","value":"x"},{"data":"","value":""}],"next":"\#(next.token)"}"#)
        let decoded = try ItemListAnswer(decoding: JSONValue.parse(answer.encoded()))
        #expect(decoded.next == next && decoded.items.map { $0.data?.copyBytes() } == [Array("x".utf8), []])
        #expect(Self.text(ItemListAnswer(MatchResult(items: [], next: nil), returning: .data)) == #"{"status":0,"items":[]}"#)
    }

    @Test func theClientReadsBackWhatTheServerWrites() throws {
        let found = Self.item(secret: Array("pw".utf8))
        let answer = try ItemAnswer(decoding: JSONValue.parse(ItemAnswer(found, returning: [.attributes, .data]).encoded()))
        let item = try #require(answer.item)
        #expect(item.attributes == found.item.attributes)
        #expect(item.persistentRef == Self.ref)
        #expect(item.data?.copyBytes() == Array("pw".utf8))
        #expect(try ItemAnswer(decoding: JSONValue.parse(Array(#"{"status":0}"#.utf8))).item == nil)
    }

    @Test func tokenAnswers() throws {
        #expect(Self.text(AuthorizationAnswer(header: "Bearer a\"b")) == #"{"Authorization":"Bearer a\"b"}"#)
        #expect(try AuthorizationAnswer(decoding: JSONValue.parse(AuthorizationAnswer(header: "Bearer x").encoded())).header
            == "Bearer x")
        #expect(Self.text(StatusAnswer.tokensSaved(replaced: 2, expiresAt: nil)) == #"{"status":0,"replaced":2,"expiresAt":null}"#)
        let tokens = TokensAnswer(accessToken: "a", refreshToken: nil, expiresAt: Self.created, expired: true)
        #expect(Self.text(tokens)
            == #"{"accessToken":"a","refreshToken":null,"expiresAt":"2026-11-21T10:00:00.123Z","expired":true}"#)
        let decoded = try TokensAnswer(decoding: JSONValue.parse(tokens.encoded()))
        #expect(decoded.accessToken == "a" && decoded.refreshToken == nil && decoded.expiresAt == Self.created && decoded.expired)
        #expect(Self.text(StatusAnswer.count(.deleted, 3)) == #"{"status":0,"deleted":3}"#)
        #expect(try StatusAnswer.count(.updated, in: JSONValue.parse(StatusAnswer.count(.updated, 4).encoded())) == 4)
    }

    @Test func base64IsFoundationsStandardPaddedForm() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 200) }
            #expect(Base64.encode(bytes) == Data(bytes).base64EncodedString())
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        }
    }
}
