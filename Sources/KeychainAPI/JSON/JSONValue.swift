/// A JSON document as parsed from, or serialized to, the wire. Objects keep their key order.
///
/// keychaind parses bodies itself rather than through `Codable`: docs/api.md wants unknown keys
/// and wrong types reported by name, duplicate keys refused, and bounded nesting, and the token
/// route's answers are on the hot path.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number written without fraction or exponent that fits in 64 bits.
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    /// The member `key` of an object, nil otherwise.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// A short name of the JSON type, for error details ("expected a string, got a number").
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// Why a JSON text was refused; `description` says where, never quoting the input.
public struct JSONParseError: Error, Sendable, CustomStringConvertible {
    public let description: String
}
