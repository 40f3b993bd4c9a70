import KeychainCore

/// An answer of the API: one JSON text, written by the answer's one writer.
public protocol JSONAnswer: Sendable {
    func encoded() -> [UInt8]
}

extension JSONValue {
    /// The string member `key` of an answer the client reads, or errSecDecode saying
    /// "`answer` has no `key`".
    func requiredString(_ key: String, of answer: String) throws -> String {
        guard let text = self[key]?.stringValue else { throw KeychainError.decode("\(answer) has no \(key)") }
        return text
    }
}
