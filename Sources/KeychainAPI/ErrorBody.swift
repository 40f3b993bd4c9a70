public import KeychainCore

/// The error body of docs/api.md ("Errors"): `{"status":-25300,"error":"errSecItemNotFound","message":"…","detail":"…"}`.
/// Server and client share it, so a client rebuilds exactly the server's `KeychainError`.
public struct ErrorBody: JSONAnswer {
    public var error: KeychainError
    /// Also Vault's `"errors": [...]` (answers Vault's clients read: a refused login).
    public var vaultErrors: Bool

    public init(_ error: KeychainError, vaultErrors: Bool = false) {
        self.error = error
        self.vaultErrors = vaultErrors
    }

    public func encoded() -> [UInt8] {
        JSONWriter.object { body in
            body.member("status", Int64(error.status))
            body.member("error", error.name)
            body.member("message", error.message)
            if let detail = error.detail { body.member("detail", detail) }
            if vaultErrors {
                body.key("errors")
                body.array { $0.string(error.detail.map { "\(error.message) (\($0))" } ?? error.message) }
            }
        }
    }

    /// The error an answer's body describes, or nil when it is not an error body.
    public init?(decoding json: JSONValue) {
        guard case .integer(let status)? = json["status"], let status32 = Int32(exactly: status),
            let code = KeychainError.Code(rawValue: status32)
        else { return nil }
        error = KeychainError(code, json["detail"]?.stringValue)
        vaultErrors = json["errors"] != nil
    }
}
