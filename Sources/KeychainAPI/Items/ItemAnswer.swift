public import KeychainCore

/// The answer of an add, or of a search for one item: `{"status":0,"item":{…}}`, or
/// `{"status":0}` when nothing was to be returned.
public struct ItemAnswer: JSONAnswer {
    public var item: AnsweredItem?

    public init(item: AnsweredItem?) {
        self.item = item
    }

    public init(_ found: borrowing FoundItem, returning kinds: ReturnKinds) {
        item = kinds.isEmpty ? nil : AnsweredItem(found, returning: kinds)
    }

    public func encoded() -> [UInt8] {
        // Written without a closure and without binding `item`: either would copy the item.
        var writer = JSONWriter(capacity: item?.estimatedLength ?? 16)
        writer.openObject()
        writer.member("status", 0)
        if item != nil { writer.key("item") }
        item?.write(to: &writer)
        writer.closeObject()
        return writer.bytes
    }

    public init(decoding json: JSONValue) throws {
        item = try json["item"].map(AnsweredItem.init(decoding:))
    }
}
