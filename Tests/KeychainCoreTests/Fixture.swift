import Foundation
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
            store: store, certificateParser: StubCertificateParser(),
            clock: {
                let tick = ticks.value.withLock { value -> Int64 in
                    value += 1
                    return value
                }
                return Fixture.start.addingTimeInterval(Double(tick) * 0.0015)
            }, pageSize: pageSize)
    }

    func fields(_ pairs: [(String, WireValue)]) -> [WireValue.Field] { pairs.map { .init($0.0, $0.1) } }

    @discardableResult
    func add(_ itemClass: ItemClass, _ pairs: [(String, WireValue)], as client: Client? = nil) throws
        -> FoundItem
    {
        try service.add(ItemRequestParser.newItem(itemClass, fields(pairs)), client: client ?? app)
    }

    func query(
        _ itemClass: ItemClass, _ pairs: [(String, WireValue)], _ operation: ItemOperation
    ) throws -> ItemQuery {
        try ItemRequestParser.query(itemClass, fields(pairs.map { ($0.0, $0.1) }), for: operation)
    }

    func find(_ itemClass: ItemClass, _ pairs: [(String, WireValue)], as client: Client? = nil) throws
        -> [FoundItem]
    {
        try service.copyMatching(query(itemClass, pairs, .copyMatching), client: client ?? app).items
    }

    func count(_ itemClass: ItemClass, _ pairs: [(String, WireValue)] = [], as client: Client? = nil)
        -> Int
    {
        (try? find(itemClass, pairs + [("limit", .text("all"))], as: client).count) ?? 0
    }

    func update(
        _ itemClass: ItemClass, _ pairs: [(String, WireValue)], set changes: [(String, WireValue)],
        as client: Client? = nil
    ) throws -> Int {
        try service.update(
            query(itemClass, pairs, .update), with: ItemRequestParser.update(itemClass, fields(changes)),
            client: client ?? app)
    }

    func delete(_ itemClass: ItemClass, _ pairs: [(String, WireValue)], as client: Client? = nil) throws
        -> Int
    {
        try service.delete(query(itemClass, pairs, .delete), client: client ?? app)
    }
}

extension Fixture {
    @discardableResult
    func add(_ pairs: [(String, WireValue)], as client: Client? = nil) throws -> FoundItem {
        try add(.genericPassword, pairs, as: client)
    }
    func query(_ pairs: [(String, WireValue)], _ operation: ItemOperation = .copyMatching) throws -> ItemQuery {
        try query(.genericPassword, pairs, operation)
    }
    func find(_ pairs: [(String, WireValue)], as client: Client? = nil) throws -> [FoundItem] {
        try find(.genericPassword, pairs, as: client)
    }
    func count(_ pairs: [(String, WireValue)] = [], as client: Client? = nil) -> Int {
        count(.genericPassword, pairs, as: client)
    }
    func update(_ pairs: [(String, WireValue)], set changes: [(String, WireValue)], as client: Client? = nil) throws -> Int {
        try update(.genericPassword, pairs, set: changes, as: client)
    }
    func delete(_ pairs: [(String, WireValue)], as client: Client? = nil) throws -> Int {
        try delete(.genericPassword, pairs, as: client)
    }
}

extension FoundItem {
    subscript(_ name: String) -> WireValue? {
        answer(returning: [.attributes, .data]).first { $0.name == name }?.value
    }
}

/// The status a throwing call fails with, or nil when it succeeds.
func status<T>(_ body: () throws -> T) -> KeychainError.Code? {
    do {
        _ = try body()
        return nil
    } catch let error as KeychainError {
        return error.code
    } catch {
        return .io
    }
}

final class Ticker: Sendable {
    let value = Mutex<Int64>(0)
}
