public import KeychainCore

extension Attribute {
    /// Types the value of a JSON body's member naming this attribute. A value of the wrong type
    /// or form is errSecParam whose detail names the attribute (never the value).
    public func value(json: JSONValue) throws -> AttributeValue {
        switch (valueType, json) {
        case (.integer, .integer(let number)): return .integer(number)
        case (.bool, .bool(let flag)): return .bool(flag)
        case (_, .string(let text)): if let value = try value(string: text) { return value }
        default: break
        }
        throw wrongType(json.typeName)
    }

    /// Types a query-string value naming this attribute: integers in decimal, booleans
    /// `true`/`false`, everything else spelled as in JSON strings.
    public func value(text: String) throws -> AttributeValue {
        switch valueType {
        case .integer:
            guard let number = Int64(text) else { throw KeychainError.param("\"\(name)\" must be a decimal integer") }
            return .integer(number)
        case .bool:
            if text == "true" { return .bool(true) }
            if text == "false" { return .bool(false) }
        default:
            if let value = try value(string: text) { return value }
        }
        throw wrongType("a string")
    }

    /// The types spelled as strings in both: text, base64 bytes, RFC 3339 dates and enumeration
    /// names; nil for integers and booleans.
    private func value(string text: String) throws -> AttributeValue? {
        switch valueType {
        case .string:
            return .string(text)
        case .data:
            guard let bytes = Base64.decode(text) else {
                throw KeychainError.param("\"\(name)\" must be standard padded base64")
            }
            return .data(bytes)
        case .date:
            guard let date = RFC3339.parse(text) else { throw KeychainError.param("\"\(name)\" must be an RFC 3339 date") }
            return .date(date.truncatedToMilliseconds)
        case .enumeration(let enumeration):
            guard let canonical = enumeration.canonical(text) else {
                throw KeychainError.param("\"\(name)\" must be one of \(enumeration.names.joined(separator: ", "))")
            }
            return .string(canonical)
        case .integer, .bool:
            return nil
        }
    }

    private func wrongType(_ given: String) -> KeychainError {
        KeychainError.param("\"\(name)\" must be \(expectedKind), not \(given)")
    }

    private var expectedKind: String {
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
    /// The value as answers and bodies spell it: strings and enumerations as strings, numbers,
    /// booleans, dates in RFC 3339 UTC with milliseconds, bytes in standard padded base64.
    public func write(to writer: inout JSONWriter) {
        switch self {
        case .string(let text): writer.string(text)
        case .data(let bytes): writer.base64(bytes)
        case .integer(let number): writer.integer(number)
        case .bool(let flag): writer.bool(flag)
        case .date(let date): writer.date(date)
        }
    }

    /// The value as a query string spells it: the same text, numbers in decimal, `true`/`false`.
    public var queryText: String {
        switch self {
        case .string(let text): text
        case .data(let bytes): Base64.encode(bytes)
        case .integer(let number): String(number)
        case .bool(let flag): flag ? "true" : "false"
        case .date(let date): RFC3339.format(date)
        }
    }
}

extension JSONWriter {
    /// Each of `attributes` as a member named after it, in catalogue order.
    mutating func attributes(_ attributes: [Attribute: AttributeValue]) {
        for attribute in Attribute.all {
            guard let value = attributes[attribute] else { continue }
            key(attribute.name)
            value.write(to: &self)
        }
    }
}
