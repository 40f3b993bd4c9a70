/// A login role's pattern for a claim's value: `*` matches any run of bytes (the empty run too),
/// every other byte only itself. Compared by UTF-8 bytes, not by Unicode equivalence, so a
/// pattern matches exactly the spellings it shows.
struct Glob: Sendable {
    let pattern: [UInt8]

    init(_ pattern: String) { self.pattern = Array(pattern.utf8) }

    /// The two-pointer wildcard match: on a mismatch it goes back only to the last `*` seen, one
    /// byte further in the text, so time is bounded by pattern length × text length, never
    /// exponential (`a*a*a*a*b` against a long run of `a`s stays quick).
    func matches(_ text: String) -> Bool {
        let text = Array(text.utf8)
        let star = UInt8(ascii: "*")
        var p = 0
        var t = 0
        var lastStar: Int?
        var textAtLastStar = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == star {
                lastStar = p
                textAtLastStar = t
                p += 1
            } else if p < pattern.count, pattern[p] == text[t] {
                p += 1
                t += 1
            } else if let lastStar {
                // Let the last `*` swallow one more byte and match on from there.
                p = lastStar + 1
                textAtLastStar += 1
                t = textAtLastStar
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == star { p += 1 }
        return p == pattern.count
    }
}
