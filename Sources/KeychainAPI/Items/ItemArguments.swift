import KeychainCore

/// The pieces every item and token request decoder shares: names given twice, attribute names
/// of a class, the spellings of `return`, `limit`, booleans and bytes. Errors are errSecParam
/// (errSecNoSuchAttr for a name that is no attribute of the class) and name the key, never a value.
enum ItemArguments {
    /// errSecParam naming the first `name` of `arguments` an earlier one has. A few arguments
    /// (every request has a few) are compared pairwise, which costs less than building a set.
    static func rejectDuplicates<Argument>(_ arguments: [Argument], name: (Argument) -> String) throws {
        if arguments.count <= 16 {
            for later in arguments.indices.dropFirst() {
                let laterName = name(arguments[later])
                if arguments[..<later].contains(where: { name($0) == laterName }) {
                    throw KeychainError.param("\"\(laterName)\" is given more than once")
                }
            }
            return
        }
        var seen = Set<String>()
        for argument in arguments where !seen.insert(name(argument)).inserted {
            throw KeychainError.param("\"\(name(argument))\" is given more than once")
        }
    }

    /// The attribute `name` of `itemClass`, or errSecNoSuchAttr.
    static func attribute(named name: String, of itemClass: ItemClass) throws -> Attribute {
        guard let attribute = Attribute.named(name), attribute.belongs(to: itemClass) else {
            throw KeychainError.noSuchAttr("\"\(name)\" is not an attribute of \(itemClass.rawValue)")
        }
        return attribute
    }

    /// `one`, `all` or a positive count.
    static func limit(_ text: String) throws -> MatchLimit {
        switch text {
        case "one": return .one
        case "all": return .all
        default:
            if let number = Int(text), number > 0 { return .count(number) }
            throw KeychainError.param("\"limit\" must be one, all or a positive number")
        }
    }

    /// A comma list of `attributes`, `data`, `ref` (spaces around each allowed), or `none`.
    static func returnKinds(_ text: String) throws -> ReturnKinds {
        if text == "none" { return .none }
        var kinds = ReturnKinds()
        // Split and trimmed on UTF-8 bytes, without an array of parts: every read parses this.
        var rest = Substring(text)
        while true {
            let comma = rest.utf8.firstIndex(of: UInt8(ascii: ",")) ?? rest.endIndex
            switch rest[..<comma].trimmingSpaces {
            case "attributes": kinds.insert(.attributes)
            case "data": kinds.insert(.data)
            case "ref": kinds.insert(.ref)
            default: throw returnError
            }
            guard comma != rest.endIndex else { return kinds }
            rest = rest[rest.utf8.index(after: comma)...]
        }
    }

    static let returnError = KeychainError.param("\"return\" must be a comma list of attributes, data, ref or none")

    /// `return` as sent: a comma list, most compact first (`attributes,data,ref`), or `none`.
    static func returnText(_ kinds: ReturnKinds) -> String {
        var names: [String] = []
        if kinds.contains(.attributes) { names.append("attributes") }
        if kinds.contains(.data) { names.append("data") }
        if kinds.contains(.ref) { names.append("ref") }
        return names.isEmpty ? "none" : names.joined(separator: ",")
    }

    static func limitText(_ limit: MatchLimit) -> String {
        switch limit {
        case .one: "one"
        case .all: "all"
        case .count(let count): String(count)
        }
    }

    /// A query string's `true` or `false`.
    static func bool(_ text: String, _ name: String) throws -> Bool {
        switch text {
        case "true": return true
        case "false": return false
        default: throw KeychainError.param("\"\(name)\" must be true or false")
        }
    }

    /// A body's `value` (a UTF-8 string) or `data` (base64 bytes).
    static func secret(_ name: String, _ value: JSONValue) throws -> SecretBytes {
        guard name == "value" else { return try secretBytes(name, value) }
        guard case .string(let text) = value else { throw KeychainError.param("\"value\" must be a string") }
        return SecretBytes(utf8: text, lockedInMemory: false)
    }

    /// A body's base64 bytes (`data`, `certificate`, `privateKey`).
    static func secretBytes(_ name: String, _ value: JSONValue) throws -> SecretBytes {
        guard case .string(let text) = value else { throw KeychainError.param("\"\(name)\" must be a base64 string") }
        return try secretBytes(name, text)
    }

    /// Secret bytes in base64; the decoded copy is wiped.
    static func secretBytes(_ name: String, _ text: String) throws -> SecretBytes {
        guard var bytes = Base64.decode(text) else {
            throw KeychainError.param("\"\(name)\" must be standard padded base64")
        }
        defer { SecretBytes.wipe(&bytes) }
        return SecretBytes(bytes, lockedInMemory: false)
    }
}

extension Substring {
    /// Without leading and trailing spaces (U+0020), cut on UTF-8 bytes.
    fileprivate var trimmingSpaces: Substring {
        let bytes = utf8
        guard let first = bytes.firstIndex(where: { $0 != UInt8(ascii: " ") }) else { return self[endIndex...] }
        let last = bytes.lastIndex(where: { $0 != UInt8(ascii: " ") })!
        return self[first..<bytes.index(after: last)]
    }
}
