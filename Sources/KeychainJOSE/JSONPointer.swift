import KeychainAPI

/// An RFC 6901 JSON pointer into a JWT's claims: `/kubernetes.io/namespace` names member
/// `namespace` of member `kubernetes.io`; `~1` stands for `/` and `~0` for `~` in a name.
struct JSONPointer: Sendable {
    /// The reference tokens, unescaped; nil when the text is not a pointer (no leading `/`, or
    /// a `~` not followed by `0` or `1`).
    let tokens: [String]?

    init(_ text: String) {
        guard text.utf8.first == UInt8(ascii: "/") else {
            tokens = nil
            return
        }
        var tokens: [String] = []
        for escaped in text.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            var token: [UInt8] = []
            var afterTilde = false
            for byte in escaped {
                if afterTilde {
                    switch byte {
                    case UInt8(ascii: "0"): token.append(UInt8(ascii: "~"))
                    case UInt8(ascii: "1"): token.append(UInt8(ascii: "/"))
                    default:
                        self.tokens = nil
                        return
                    }
                    afterTilde = false
                } else if byte == UInt8(ascii: "~") {
                    afterTilde = true
                } else {
                    token.append(byte)
                }
            }
            guard !afterTilde else {
                self.tokens = nil
                return
            }
            tokens.append(String(decoding: token, as: UTF8.self))
        }
        self.tokens = tokens
    }

    /// The value the pointer names in `document`; nil when there is none.
    func resolve(in document: JSONValue) -> JSONValue? {
        guard let tokens else { return nil }
        var value = document
        for token in tokens {
            switch value {
            case .object(let members):
                guard let member = members.first(where: { $0.0.utf8.elementsEqual(token.utf8) }) else { return nil }
                value = member.1
            case .array(let elements):
                // An index: decimal digits, no leading zero (RFC 6901 §4).
                guard token.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                    token == "0" || token.utf8.first != UInt8(ascii: "0"),
                    let index = Int(token), index < elements.count
                else { return nil }
                value = elements[index]
            default:
                return nil
            }
        }
        return value
    }
}
