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
