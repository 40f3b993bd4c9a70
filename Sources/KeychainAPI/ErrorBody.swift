import KeychainCore

/// The contract's error body: `{"status":-25300,"error":"errSecItemNotFound","message":"…","detail":"…"}`.
/// Server and client share it, so a client rebuilds exactly the server's `KeychainError`.
extension KeychainError {
    public var errorBody: JSONValue {
        var members: [(String, JSONValue)] = [
            ("status", .integer(Int64(status))), ("error", .string(name)), ("message", .string(message)),
        ]
        if let detail { members.append(("detail", .string(detail))) }
        return .object(members)
    }

    /// The error an error body describes, or nil when the body is not one.
    public init?(errorBody: JSONValue) {
        guard case .integer(let status)? = errorBody["status"], let status32 = Int32(exactly: status),
            let code = Code(rawValue: status32)
        else { return nil }
        self.init(code, errorBody["detail"]?.stringValue)
    }
}
