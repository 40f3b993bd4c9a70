public import KeychainCore

/// The error body of docs/api.md ("Errors"): `{"status":-25300,"error":"errSecItemNotFound","message":"…","detail":"…"}`.
/// Server and client share it, so a client rebuilds exactly the server's `KeychainError`.
public struct ErrorBody: JSONAnswer {
    public var error: KeychainError

    public init(_ error: KeychainError) {
        self.error = error
    }

    public func encoded() -> [UInt8] {
        JSONWriter.object { body in
            body.member("status", Int64(error.status))
            body.member("error", error.name)
            body.member("message", error.message)
            if let detail = error.detail { body.member("detail", detail) }
        }
    }

    /// The error an answer's body describes, or nil when it is not an error body.
    public init?(decoding json: JSONValue) {
        guard case .integer(let status)? = json["status"], let status32 = Int32(exactly: status),
            let code = KeychainError.Code(rawValue: status32)
        else { return nil }
        error = KeychainError(code, json["detail"]?.stringValue)
    }
}
