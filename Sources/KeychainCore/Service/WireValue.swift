import Foundation

/// A value as a request spells it, before it is typed against an attribute: a JSON value from a
/// body, or `.text` from a query string (where numbers are decimal and booleans `true`/`false`).
/// The HTTP layer maps its JSON to this and back, so Core parses both spellings in one place.
public enum WireValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// A JSON number that is not an exact 64-bit integer.
    case number(Double)
    case string(String)
    case array([WireValue])
    case object([Field])
    /// Text from a query string, already percent-decoded.
    case text(String)

    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: WireValue
        public init(_ name: String, _ value: WireValue) {
            self.name = name
            self.value = value
        }
    }

    /// The text of a `.string` or `.text`.
    public var stringValue: String? {
        switch self {
        case .string(let text), .text(let text): text
        default: nil
        }
    }

    /// A short name of the value's type, for error details (never the value itself).
    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .number: "a number"
        case .string, .text: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
