import KeychainAPI
import KeychainCore

extension JSONValue {
    /// The value for Core's parsers.
    var wireValue: WireValue {
        switch self {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .integer(let number): .integer(number)
        case .number(let number): .number(number)
        case .string(let text): .string(text)
        case .array(let values): .array(values.map(\.wireValue))
        case .object(let members): .object(members.map { .init($0.0, $0.1.wireValue) })
        }
    }

    init(_ wire: WireValue) {
        switch wire {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .integer(let number): self = .integer(number)
        case .number(let number): self = .number(number)
        case .string(let text), .text(let text): self = .string(text)
        case .array(let values): self = .array(values.map(JSONValue.init))
        case .object(let fields): self = .object(fields.map { ($0.name, JSONValue($0.value)) })
        }
    }

    init(fields: [WireValue.Field]) {
        self = .object(fields.map { ($0.name, JSONValue($0.value)) })
    }
}

extension HTTPRequest {
    /// The body as the members of a JSON object; anything else is errSecParam.
    func jsonObjectBody() throws -> [(String, JSONValue)] {
        let value: JSONValue
        do {
            value = try JSONValue.parse(body)
        } catch {
            throw KeychainError.param("the body is not valid JSON: \(error.description)")
        }
        guard case .object(let members) = value else {
            throw KeychainError.param("the body must be a JSON object, not \(value.typeName)")
        }
        return members
    }

    /// The body's members as fields for Core's parsers.
    func bodyFields() throws -> [WireValue.Field] {
        try jsonObjectBody().map { .init($0.0, $0.1.wireValue) }
    }

    /// The query-string parameters as text fields.
    var queryFields: [WireValue.Field] {
        queryItems.map { .init($0.name, .text($0.value)) }
    }
}
