import Foundation
import KeychainAPI
import KeychainCore
import KeychainTestSupport
import Synchronization

/// A service over a fresh in-memory store with a clock that moves 1.5 ms per reading.
final class Fixture: Sendable {
    let store = InMemoryItemStore()
    let service: KeychainService
    let ticks = Ticker()
    static let start = Date(timeIntervalSince1970: 1_795_255_200.1234)

    let app = Client(name: "app", accessGroups: ["team.app", "team.shared"], role: .client, createdAt: Date())
    let other = Client(name: "other", accessGroups: ["team.other", "team.shared"], role: .client, createdAt: Date())
    let stranger = Client(name: "stranger", accessGroups: ["team.stranger"], role: .client, createdAt: Date())
    let groupless = Client(name: "groupless", accessGroups: [], role: .client, createdAt: Date())

    init(pageSize: Int = 1000) {
        let ticks = self.ticks
        service = KeychainService(
            store: store, certificateParser: StubCertificateParser(), cursors: .forTests,
            clock: {
                let tick = ticks.value.withLock { value -> Int64 in
                    value += 1
                    return value
                }
                return Fixture.start.addingTimeInterval(Double(tick) * 0.0015)
            }, pageSize: pageSize)
    }

    /// A query as a query string spells it: strings as they are, numbers in decimal, booleans
    /// `true`/`false`.
    static func parameters(_ pairs: [(String, JSONValue)]) -> [QueryParameter] {
        pairs.map { name, value in
            let text: String =
                switch value {
                case .string(let text): text
                case .integer(let number): String(number)
                case .bool(let flag): flag ? "true" : "false"
                default: String(decoding: value.serialized(), as: UTF8.self)
                }
            return QueryParameter(name: name, value: text)
        }
    }

    @discardableResult
    func add(_ itemClass: ItemClass, _ pairs: [(String, JSONValue)], as client: Client? = nil) throws
        -> FoundItem
    {
        try service.add(ItemAddRequest(decoding: JSONBody(pairs), of: itemClass).item, client: client ?? app)
    }

    func query(
        _ itemClass: ItemClass, _ pairs: [(String, JSONValue)], _ operation: ItemOperation
    ) throws -> ItemQuery {
        try ItemQuery(decoding: Self.parameters(pairs), of: itemClass, for: operation)
    }

    func find(_ itemClass: ItemClass, _ pairs: [(String, JSONValue)], as client: Client? = nil) throws
        -> [FoundItem]
    {
        try service.copyMatching(query(itemClass, pairs, .copyMatching), client: client ?? app).items
    }

    func count(_ itemClass: ItemClass, _ pairs: [(String, JSONValue)] = [], as client: Client? = nil)
        -> Int
    {
        (try? find(itemClass, pairs + [("limit", .string("all"))], as: client).count) ?? 0
    }

    func update(
        _ itemClass: ItemClass, _ pairs: [(String, JSONValue)], set changes: [(String, JSONValue)],
        as client: Client? = nil
    ) throws -> Int {
        try service.update(
            query(itemClass, pairs, .update), with: ItemUpdate(decoding: JSONBody(changes), of: itemClass),
            client: client ?? app)
    }

    func delete(_ itemClass: ItemClass, _ pairs: [(String, JSONValue)], as client: Client? = nil) throws
        -> Int
    {
        try service.delete(query(itemClass, pairs, .delete), client: client ?? app)
    }
}

extension Fixture {
    @discardableResult
    func add(_ pairs: [(String, JSONValue)], as client: Client? = nil) throws -> FoundItem {
        try add(.genericPassword, pairs, as: client)
    }
    func query(_ pairs: [(String, JSONValue)], _ operation: ItemOperation = .copyMatching) throws -> ItemQuery {
        try query(.genericPassword, pairs, operation)
    }
    func find(_ pairs: [(String, JSONValue)], as client: Client? = nil) throws -> [FoundItem] {
        try find(.genericPassword, pairs, as: client)
    }
    func count(_ pairs: [(String, JSONValue)] = [], as client: Client? = nil) -> Int {
        count(.genericPassword, pairs, as: client)
    }
    func update(_ pairs: [(String, JSONValue)], set changes: [(String, JSONValue)], as client: Client? = nil) throws -> Int {
        try update(.genericPassword, pairs, set: changes, as: client)
    }
    func delete(_ pairs: [(String, JSONValue)], as client: Client? = nil) throws -> Int {
        try delete(.genericPassword, pairs, as: client)
    }
}

extension FoundItem {
    /// The member `name` of this item as an answer returning attributes and data gives it.
    subscript(_ name: String) -> JSONValue? {
        answer(returning: [.attributes, .data])[name]
    }

    /// This item as an answer returning `kinds` gives it.
    func answer(returning kinds: ReturnKinds) -> JSONValue {
        var writer = JSONWriter()
        AnsweredItem(self, returning: kinds).write(to: &writer)
        return (try? JSONValue.parse(writer.bytes)) ?? .null
    }

    /// The names of the members of that answer, in order.
    func answerNames(returning kinds: ReturnKinds) -> [String] {
        guard case .object(let members) = answer(returning: kinds) else { return [] }
        return members.map(\.0)
    }
}

final class Ticker: Sendable {
    let value = Mutex<Int64>(0)
}
