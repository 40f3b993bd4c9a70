import Foundation
public import KeychainCore
import Synchronization

/// An `ItemStore` in memory, for tests of the service layer and as the reference the conformance
/// suite holds every other store to. One lock guards everything; a transaction holds it
/// throughout and works on a copy of the rows, which replaces them when it commits.
public final class InMemoryItemStore: ItemStore {
    private let state = Mutex(Rows())

    public init() {}

    public func find(
        _ filter: ItemFilter, limit: Int?, after cursor: ItemCursor?, reading contents: ItemContents, maxBytes: Int?
    ) throws -> ItemPage {
        state.withLock { $0.find(filter, limit: limit, after: cursor, reading: contents, maxBytes: maxBytes) }
    }

    public func transaction<Result>(_ body: (any ItemOperations) throws -> Result) throws -> Result {
        try state.withLock { rows in
            let transaction = Transaction(rows)
            let result = try body(transaction)
            if let failure = transaction.failure { throw failure }
            rows = transaction.rows
            return result
        }
    }

    public func countByClass() throws -> [ItemClass: Int] {
        state.withLock { state in
            var counts: [ItemClass: Int] = [:]
            for itemClass in ItemClass.storedClasses { counts[itemClass] = 0 }
            for row in state.rows { counts[row.item.itemClass, default: 0] += 1 }
            return counts
        }
    }

    /// The operations of one transaction, on its own copy of the rows.
    private final class Transaction: ItemOperations {
        var rows: Rows
        /// The first error an operation threw: the transaction then commits nothing.
        private(set) var failure: (any Error)?

        init(_ rows: Rows) { self.rows = rows }

        func add(_ items: [Item]) throws { try run { try rows.add(items) } }

        func find(
            _ filter: ItemFilter, limit: Int?, after cursor: ItemCursor?, reading contents: ItemContents, maxBytes: Int?
        ) throws -> ItemPage {
            try run { rows.find(filter, limit: limit, after: cursor, reading: contents, maxBytes: maxBytes) }
        }

        func update(_ filter: ItemFilter, with changes: ItemChanges) throws -> Int {
            try run { try rows.update(filter, with: changes) }
        }

        func delete(_ filter: ItemFilter) throws -> Int { try run { rows.delete(filter) } }

        private func run<T>(_ operation: () throws -> T) throws -> T {
            if let failure { throw failure }
            do {
                return try operation()
            } catch {
                failure = error
                throw error
            }
        }
    }
}

/// The stored items in creation order. Each change checks first and changes after, so one that
/// throws leaves the rows as they were.
private struct Rows {
    struct Row {
        var sequence: Int64
        var item: Item
    }

    var rows: [Row] = []
    var nextSequence: Int64 = 1

    mutating func add(_ items: [Item]) throws {
        var keys = Set(rows.map { PrimaryKey($0.item) })
        for item in items {
            guard keys.insert(PrimaryKey(item)).inserted else { throw KeychainError.duplicateItem() }
        }
        for item in items {
            rows.append(Row(sequence: nextSequence, item: item))
            nextSequence += 1
        }
    }

    func find(
        _ filter: ItemFilter, limit: Int?, after cursor: ItemCursor?, reading contents: ItemContents, maxBytes: Int?
    ) -> ItemPage {
        let start = cursor?.afterSequence ?? 0
        let matches = rows.filter { $0.sequence > start && filter.matches($0.item) }
        let read = matches.map { row -> Item in
            var item = row.item
            if !contents.contains(.attributes) { item.attributes = [:] }
            if !contents.contains(.secret) { item.secret = nil }
            return item
        }
        let count = ItemPage.count(of: read.lazy.map(ItemPage.bytes(of:)), limit: limit, maxBytes: maxBytes)
        let next = count < matches.count && count > 0 ? ItemCursor(afterSequence: matches[count - 1].sequence) : nil
        return ItemPage(items: Array(read.prefix(count)), next: next)
    }

    mutating func update(_ filter: ItemFilter, with changes: ItemChanges) throws -> Int {
        var changed = rows
        var count = 0
        for index in changed.indices where filter.matches(changed[index].item) {
            var item = changed[index].item
            for (attribute, value) in changes.attributes { item.attributes[attribute] = value }
            if let secret = changes.secret { item.secret = secret }
            item.attributes[.modificationDate] = .date(
                Self.later(changes.modificationDate, than: item.attributes[.modificationDate]))
            changed[index].item = item
            count += 1
        }
        var keys = Set<PrimaryKey>()
        for row in changed where !keys.insert(PrimaryKey(row.item)).inserted {
            throw KeychainError.duplicateItem()
        }
        rows = changed
        return count
    }

    mutating func delete(_ filter: ItemFilter) -> Int {
        let before = rows.count
        rows.removeAll { filter.matches($0.item) }
        return before - rows.count
    }

    /// `date`, or one millisecond after `previous` when `date` is not later than it.
    private static func later(_ date: Date, than previous: AttributeValue?) -> Date {
        guard case .date(let old) = previous, date <= old else { return date }
        return Date(millisecondsSince1970: old.millisecondsSince1970 + 1)
    }

    private struct PrimaryKey: Hashable {
        let itemClass: ItemClass
        let values: [AttributeValue]
        init(_ item: Item) {
            itemClass = item.itemClass
            values = item.primaryKey
        }
    }
}
