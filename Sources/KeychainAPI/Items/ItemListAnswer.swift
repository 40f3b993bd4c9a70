public import KeychainCore

/// The answer of a search for several items: `{"status":0,"items":[…],"next":"…"}`, `next`
/// only when more match (the cursor for the next page).
public struct ItemListAnswer: JSONAnswer {
    public var items: [AnsweredItem]
    public var next: PageCursor?

    public init(_ result: MatchResult, returning kinds: ReturnKinds) {
        items = result.items.map { AnsweredItem($0, returning: kinds) }
        next = result.next
    }

    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: items.reduce(32) { $0 + $1.estimatedLength }) { answer in
            answer.member("status", 0)
            answer.key("items")
            answer.array { list in
                for item in items { item.write(to: &list) }
            }
            if let next { answer.member("next", next.token) }
        }
    }

    public init(decoding json: JSONValue) throws {
        guard case .array(let items)? = json["items"] else { throw KeychainError.decode("the answer has no \"items\"") }
        self.items = try items.map(AnsweredItem.init(decoding:))
        next = try json["next"].map { value in
            guard let token = value.stringValue, let cursor = PageCursor(token: token) else {
                throw KeychainError.decode("the answer's \"next\" is not a cursor")
            }
            return cursor
        }
    }
}
