public import KeychainCore

/// A request body as the API reads it: one JSON object, its members in the order sent.
public struct JSONBody: Sendable {
    public var members: [(String, JSONValue)]

    public init(_ members: [(String, JSONValue)]) {
        self.members = members
    }

    /// Parses a body; text that is not JSON, or JSON that is not an object, is errSecParam
    /// whose detail says where (never quoting the body).
    public init(parsing bytes: [UInt8]) throws(KeychainError) {
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes)
        } catch {
            throw KeychainError.param("the body is not valid JSON: \(error.description)")
        }
        guard case .object(let members) = value else {
            throw KeychainError.param("the body must be a JSON object, not \(value.typeName)")
        }
        self.members = members
    }
}
