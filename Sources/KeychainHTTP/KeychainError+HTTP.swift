public import KeychainCore

extension KeychainError {
    /// The HTTP status for an OSStatus: docs/api.md's table ("Errors"), decided here and nowhere else.
    public var httpStatus: Int {
        switch code {
        case .param, .noSuchAttr, .readOnlyAttr, .invalidValue, .dataTooLarge: 400
        case .authFailed: 401
        case .missingEntitlement, .restrictedAPI: 403
        case .itemNotFound, .noSuchClass: 404
        case .unimplemented: 501
        case .serviceNotAvailable: 502
        case .duplicateItem: 409
        case .interactionNotAllowed, .notAvailable: 503
        case .diskFull: 507
        case .io where isTemporary: 503
        default: 500
        }
    }
}

extension KeychainError {
    /// The status and `errors` of this error on the Vault surface (docs/api.md, "Tools written for
    /// Vault"), as OpenBao answers the like: a refused token or a group the caller lacks is 403
    /// `permission denied` (never which), a missing secret 404 with no message, a locked vault
    /// 503 `Vault is sealed`, a full quota 400 with its detail (docs/decisions.md), a token
    /// endpoint that failed a refresh 502 with its error (the details of errSecServiceNotAvailable
    /// never carry a secret: `SentSecrets`); anything
    /// unexpected 500 without a detail. `status` (a transport's 413, the limiter's 429) is kept
    /// for the errors whose own status is not fixed by Vault's conventions.
    public func vaultAnswer(status: Int? = nil) -> (status: Int, errors: [String]) {
        switch code {
        case .authFailed where status == 429: (429, [detail ?? message])
        case .authFailed, .missingEntitlement, .restrictedAPI: (403, ["permission denied"])
        case .itemNotFound, .noSuchClass: (404, [])
        case .interactionNotAllowed: (503, ["Vault is sealed"])
        case .notAvailable: (503, [detail ?? message])
        case .io where isTemporary: (503, [detail ?? message])
        // A provider that failed a `tokens/` read's refresh: 502 with its error, as `/authorization`.
        case .serviceNotAvailable: (502, [detail ?? message])
        case .param, .noSuchAttr, .readOnlyAttr, .invalidValue, .dataTooLarge, .duplicateItem, .diskFull:
            (status ?? 400, [detail ?? message])
        default: (500, ["internal error"])
        }
    }
}
