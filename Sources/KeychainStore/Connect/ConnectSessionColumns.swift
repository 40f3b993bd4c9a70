package import KeychainCore

/// How both backends' `connect_sessions` tables spell a session's outcome and scopes, and open
/// its sealed verifier.
package enum ConnectSessionColumns {
    /// `outcome`, `error`, `refreshable` (nil unless connected), `granted_scope`.
    package static func encode(_ outcome: ConnectOutcome) -> (name: String, error: String?, refreshable: Bool?, grantedScope: String?) {
        switch outcome {
        case .pending: ("pending", nil, nil, nil)
        case .connected(let refreshable, let scope): ("connected", nil, refreshable, scope)
        case .failed(let error): ("failed", error, nil, nil)
        }
    }

    /// The outcome a row holds; errSecDecode for a value no release writes.
    package static func decode(name: String, error: String?, refreshable: Bool?, grantedScope: String?) throws -> ConnectOutcome {
        switch name {
        case "pending": return .pending
        case "connected": return .connected(refreshable: refreshable ?? false, grantedScope: grantedScope)
        case "failed": return .failed(error: error ?? ConnectOutcome.providerError)
        default: throw KeychainError.decode("a stored connect session has an unknown outcome")
        }
    }

    /// Scopes as stored: separated by single spaces, as OAuth's `scope` parameter is (RFC 6749 §3.3).
    package static func encode(scopes: [String]) -> String { scopes.joined(separator: " ") }

    package static func decode(scopes: String) -> [String] { scopes.split(separator: " ").map(String.init) }
}

extension Keyring {
    /// A session's verifier as its row stores it, opened.
    package func openConnectVerifier(_ box: [UInt8], connectId: String) throws -> SecretBytes {
        try open(box, binding: .connectVerifier(connectId: connectId))
    }
}
