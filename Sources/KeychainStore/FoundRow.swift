package import KeychainCore

/// One item row a find read, on either backend: its sequence (the listing's order), the item
/// (with its attributes only when the find read them) and its sealed secret.
package struct FoundRow: Sendable {
    package let seq: Int64
    /// With its attributes only when the find read them.
    package let item: Item
    package let sealedSecret: [UInt8]?
    /// The access group the secret is sealed to (the item's, read even when its attributes are not).
    package let accessGroup: String

    package init(seq: Int64, item: Item, sealedSecret: [UInt8]?, accessGroup: String? = nil) {
        self.seq = seq
        self.item = item
        self.sealedSecret = sealedSecret
        self.accessGroup = accessGroup ?? item.accessGroup
    }

    /// About how much memory the row holds, and what it counts for against a page's byte
    /// bound (`ItemPage.bytes`, of the sealed secret).
    package var size: Int { ItemPage.bytes(secretBytes: sealedSecret?.count ?? 0, attributes: item.attributes) }
}

extension FoundRow {
    /// The answer of a find from its rows: at most `limit` items and `maxBytes` bytes (the first
    /// item always), each with its secret opened.
    package static func page(of rows: [FoundRow], limit: Int?, maxBytes: Int?, keyring: Keyring) throws -> ItemPage {
        var page = rows
        var next: ItemCursor?
        let count = maxBytes == nil ? min(rows.count, limit.map { max(0, $0) } ?? .max)
            : ItemPage.count(of: rows.lazy.map(\.size), limit: limit, maxBytes: maxBytes)
        if count < rows.count {
            page = Array(rows.prefix(count))
            next = page.last.map { ItemCursor(afterSequence: $0.seq) }
        }
        let items = try page.map { row -> Item in
            var item = row.item
            if let box = row.sealedSecret {
                let binding = SealBinding(itemClass: item.itemClass, persistentRef: item.persistentRef, accessGroup: row.accessGroup)
                item.secret = try keyring.open(box, binding: binding)
            }
            return item
        }
        return ItemPage(items: items, next: next)
    }
}
