public import KeychainCore

/// The answer of a search for several items: `{"status":0,"items":[…],"next":"…"}`, `next`
/// only when more match (the cursor for the next page).
public struct ItemListAnswer: JSONAnswer {
    public var items: [AnsweredItem]
    public var next: PageCursor?

    /// The `ItemPage.bytes` a page may hold (`KeychainService.maxPageBytes`) for its answer to
    /// stay within `answerBytes`. An answer spells each byte counted there in at most 8: a secret
    /// as base64 (4/3) and, when it is text, as `value` too (at most 6, a control character
    /// escaped as `\u00XX`); a string attribute at most 6; a number, flag or date (counted 8) in
    /// at most 26; names, reference and punctuation within the 256 counted per item. 1 KiB is
    /// left for the envelope (`status`, `next`).
    public static func pageBytes(forAnswerBytes answerBytes: Int) -> Int {
        max(1, (answerBytes - 1024) / 8)
    }

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
            guard let token = value.stringValue else { throw KeychainError.decode("the answer's \"next\" is not a cursor") }
            return PageCursor(token: token)
        }
    }
}
