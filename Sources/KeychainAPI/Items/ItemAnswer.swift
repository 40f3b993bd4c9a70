public import KeychainCore

/// The answer of an add, or of a search for one item: `{"status":0,"item":{…}}`, or
/// `{"status":0}` when nothing was to be returned.
public struct ItemAnswer: JSONAnswer {
    public var item: AnsweredItem?

    public init(item: AnsweredItem?) {
        self.item = item
    }

    public init(_ found: FoundItem, returning kinds: ReturnKinds) {
        item = kinds.isEmpty ? nil : AnsweredItem(found, returning: kinds)
    }

    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: item?.estimatedLength ?? 16) { answer in
            answer.member("status", 0)
            if let item {
                answer.key("item")
                item.write(to: &answer)
            }
        }
    }

    public init(decoding json: JSONValue) throws {
        item = try json["item"].map(AnsweredItem.init(decoding:))
    }
}
