import Foundation
import KeychainCore
import Synchronization

/// An `ItemStore` in memory, for tests of the service layer and as the reference the conformance
/// suite holds every other store to. One lock guards everything, so each call is atomic.
public final class InMemoryItemStore: ItemStore {
    private struct Row {
        var sequence: Int64
        var item: Item
    }

    private struct State {
        var rows: [Row] = []
        var nextSequence: Int64 = 1
    }

    private let state = Mutex(State())

    public init() {}

    public func add(_ items: [Item]) throws {
        try state.withLock { state in
            var keys = Set(state.rows.map { PrimaryKey($0.item) })
            for item in items {
                guard keys.insert(PrimaryKey(item)).inserted else {
                    throw KeychainError.duplicateItem()
                }
            }
            for item in items {
                state.rows.append(Row(sequence: state.nextSequence, item: item))
                state.nextSequence += 1
            }
        }
    }

    public func find(_ filter: ItemFilter, limit: Int?, after cursor: ItemCursor?, reading contents: ItemContents) throws
        -> ItemPage
    {
        state.withLock { state in
            let start = cursor?.afterSequence ?? 0
            let matches = state.rows.filter { $0.sequence > start && filter.matches($0.item) }
            let page = limit.map { Array(matches.prefix($0)) } ?? matches
            let next = page.count < matches.count ? page.last.map { ItemCursor(afterSequence: $0.sequence) } : nil
            let items = page.map { row -> Item in
                var item = row.item
                if !contents.contains(.attributes) { item.attributes = [:] }
                if !contents.contains(.secret) { item.secret = nil }
                return item
            }
            return ItemPage(items: items, next: next)
        }
    }

    public func update(_ filter: ItemFilter, with changes: ItemChanges) throws -> Int {
        try state.withLock { state in
            var rows = state.rows
            var changed = 0
            for index in rows.indices where filter.matches(rows[index].item) {
                var item = rows[index].item
                for (attribute, value) in changes.attributes { item.attributes[attribute] = value }
                if let secret = changes.secret { item.secret = secret }
                item.attributes[.modificationDate] = .date(
                    Self.later(changes.modificationDate, than: item.attributes[.modificationDate]))
                rows[index].item = item
                changed += 1
            }
            var keys = Set<PrimaryKey>()
            for row in rows where !keys.insert(PrimaryKey(row.item)).inserted {
                throw KeychainError.duplicateItem()
            }
            state.rows = rows
            return changed
        }
    }

    public func delete(_ filter: ItemFilter) throws -> Int {
        state.withLock { state in
            let before = state.rows.count
            state.rows.removeAll { filter.matches($0.item) }
            return before - state.rows.count
        }
    }

    public func replace(deleting filters: [ItemFilter], adding items: [Item]) throws -> Int {
        try state.withLock { state in
            let before = state.rows.count
            var rows = state.rows
            rows.removeAll { row in filters.contains { $0.matches(row.item) } }
            let deleted = before - rows.count
            var keys = Set(rows.map { PrimaryKey($0.item) })
            for item in items {
                guard keys.insert(PrimaryKey(item)).inserted else { throw KeychainError.duplicateItem() }
            }
            for item in items {
                rows.append(Row(sequence: state.nextSequence, item: item))
                state.nextSequence += 1
            }
            state.rows = rows
            return deleted
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
