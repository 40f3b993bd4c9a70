import KeychainCore

/// What went wrong in a crypto operation, without C detail. Mapped to `KeychainError` in one
/// place (`keychainError`).
enum CryptoError: Error, Equatable, CustomStringConvertible {
    /// The tag did not verify: the data was altered, moved, or the key is wrong.
    case authenticationFailure
    /// A key, nonce or box of the wrong size or format.
    case invalidInput(String)
    /// The library refused an operation it should accept (out of memory, RNG failure).
    case internalFailure(String)

    var description: String {
        switch self {
        case .authenticationFailure: "authentication failed"
        case .invalidInput(let what): "invalid input: \(what)"
        case .internalFailure(let what): "crypto library failure: \(what)"
        }
    }

    var keychainError: KeychainError {
        switch self {
        case .authenticationFailure: .decode("stored secret failed authentication")
        case .invalidInput(let what): .decode("stored secret is malformed: \(what)")
        case .internalFailure(let what): KeychainError(.allocate, what)
        }
    }
}
