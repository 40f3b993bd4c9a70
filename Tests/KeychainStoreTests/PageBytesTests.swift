import Foundation
import KeychainCore
import KeychainTestSupport
import Testing
@testable import KeychainStore

/// Finds bounded in bytes (`ItemOperations.find`'s `maxBytes`): every store cuts a page before
/// the item that would take it past the bound, always answers the first item, and continues
/// with `next` as a page cut by its limit does.
@Suite("Pages bounded in bytes")
struct PageBytesTests {
    /// Pages through `filter` with `maxBytes`; returns the pages.
    func pages(_ store: any ItemStore, _ filter: ItemFilter, limit: Int?, maxBytes: Int) throws -> [[Item]] {
        var pages: [[Item]] = []
        var cursor: ItemCursor?
        repeat {
            let page = try store.find(filter, limit: limit, after: cursor, reading: .all, maxBytes: maxBytes)
            pages.append(page.items)
            cursor = page.next
        } while cursor != nil && pages.count < 1000
        return pages
    }

    @Test(arguments: StoreKind.allCases)
    func pagesStayWithinTheBoundAndTogetherHoldEveryItem(kind: StoreKind) throws {
        let (store, keep) = try kind.make()
        defer { withExtendedLifetime(keep) {} }
        // Same service and account, so that exact finds go through the lookup map (different
        // tokenID keeps them apart); sizes from 100 bytes to one item past the bound on its own.
        let items = (0..<60).map { index in
            item(
                account: "a", service: "s", secret: String(repeating: "x", count: index == 30 ? 9_000 : 100 + (index * 389) % 2_000),
                extra: [.tokenID: .string("t\(index)")])
        }
        try store.add(items)
        let maxBytes = 6_000
        let exact = ItemFilter(
            itemClass: .genericPassword, accessGroups: ["g1"], equal: [.service: .string("s"), .account: .string("a")])
        let scan = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"])
        for filter in [exact, scan] {
            for limit in [nil, 7] as [Int?] {
                let pages = try pages(store, filter, limit: limit, maxBytes: maxBytes)
                #expect(pages.count > 10)
                for page in pages {
                    #expect(!page.isEmpty)
                    #expect(page.count <= limit ?? .max)
                    #expect(page.map(ItemPage.bytes(of:)).reduce(0, +) <= maxBytes || page.count == 1)
                }
                #expect(pages.flatMap { $0 }.map(\.persistentRef) == items.map(\.persistentRef))
            }
        }
        // The item larger than the bound comes alone.
        #expect(try pages(store, scan, limit: nil, maxBytes: maxBytes).contains { $0.map(\.persistentRef) == [items[30].persistentRef] })
    }
}
