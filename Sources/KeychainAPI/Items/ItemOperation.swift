public import KeychainCore

/// The four keychain calls, each a route: what each call's request may carry.
public enum ItemOperation: Sendable {
    case add, copyMatching, update, delete

    /// The control keys an item request may carry besides attributes and the secret.
    public enum Control: String, Sendable {
        case limit, `return`, caseInsensitive, cursor, all
    }

    /// errSecParam when this call does not take `control` (docs/api.md, "Items"; the client refuses
    /// the same keys with the same error before sending), nil when it does. A delete takes
    /// `return` and ignores it, as securityd does.
    public func refusal(of control: Control) -> KeychainError? {
        switch (self, control) {
        case (.add, .return), (.copyMatching, .limit), (.copyMatching, .return), (.copyMatching, .caseInsensitive),
            (.copyMatching, .cursor), (.delete, .return), (.delete, .all):
            nil
        case (.add, _): KeychainError.param("\"\(control.rawValue)\" is not allowed when adding")
        case (_, .all): KeychainError.param("\"all\" is only for a delete")
        case (_, .return): KeychainError.param("\"return\" is not allowed here")
        default: KeychainError.param("\"\(control.rawValue)\" is only for a search")
        }
    }
}
