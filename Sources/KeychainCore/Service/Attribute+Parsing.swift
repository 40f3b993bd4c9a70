import Foundation

extension Attribute {
    /// Types a request value for this attribute. JSON bodies give typed values; query strings give
    /// `.text`, read as decimal numbers, `true`/`false`, and the same strings as JSON.
    /// A value of the wrong type or form is errSecParam whose detail names the attribute (never a value).
    public func parse(_ value: WireValue) throws -> AttributeValue {
        switch valueType {
        case .string:
            if let text = value.stringValue { return .string(text) }
        case .data:
            if let text = value.stringValue {
                guard let bytes = Base64.decode(text) else {
                    throw KeychainError.param("\"\(name)\" must be standard padded base64")
                }
                return .data(bytes)
            }
        case .integer:
            switch value {
            case .integer(let number): return .integer(number)
            case .text(let text):
                guard let number = Int64(text) else {
                    throw KeychainError.param("\"\(name)\" must be a decimal integer")
                }
                return .integer(number)
            default: break
            }
        case .bool:
            switch value {
            case .bool(let flag): return .bool(flag)
            case .text("true"): return .bool(true)
            case .text("false"): return .bool(false)
            default: break
            }
        case .date:
            if let text = value.stringValue {
                guard let date = RFC3339.parse(text) else {
                    throw KeychainError.param("\"\(name)\" must be an RFC 3339 date")
                }
                return .date(date.truncatedToMilliseconds)
            }
        case .enumeration(let enumeration):
            if let text = value.stringValue {
                guard let canonical = enumeration.canonical(text) else {
                    throw KeychainError.param(
                        "\"\(name)\" must be one of \(enumeration.names.joined(separator: ", "))")
                }
                return .string(canonical)
            }
        }
        throw KeychainError.param("\"\(name)\" must be \(expectedKind), not \(value.kindName)")
    }

    var expectedKind: String {
        switch valueType {
        case .string: "a string"
        case .data: "a base64 string"
        case .integer: "an integer"
        case .bool: "a boolean"
        case .date: "an RFC 3339 date string"
        case .enumeration: "a string naming a \(name) value"
        }
    }
}

extension AttributeValue {
    /// The answer spelling: strings and enumerations as strings, numbers, booleans, dates in
    /// RFC 3339 UTC with milliseconds, bytes in standard padded base64.
    public var wireValue: WireValue {
        switch self {
        case .string(let text): .string(text)
        case .data(let bytes): .string(Base64.encode(bytes))
        case .integer(let number): .integer(number)
        case .bool(let flag): .bool(flag)
        case .date(let date): .string(RFC3339.format(date))
        }
    }
}

/// Standard base64 with padding (RFC 4648 §4), strict on input.
public enum Base64 {
    public static func encode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        Data(bytes).base64EncodedString()
    }

    /// nil unless `text` is standard base64 with correct padding and no whitespace.
    public static func decode(_ text: String) -> [UInt8]? {
        guard text.utf8.count % 4 == 0,
            text.utf8.allSatisfy({ alphabet.contains($0) }),
            let data = Data(base64Encoded: text)
        else { return nil }
        return Array(data)
    }

    private static let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=".utf8)
}
