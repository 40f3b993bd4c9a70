/// The one error of keychaind: an OSStatus from Apple's Security framework, its name, Apple's
/// message (SecCopyErrorMessageString) and an optional `detail` saying what exactly was wrong.
///
/// `detail` is shown to clients: it must never hold a secret, a token or key material.
public struct KeychainError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    public let code: Code
    public let detail: String?
    /// The failure is expected to pass by itself (the database unreachable for now): answered
    /// with HTTP 503 rather than 500, so that clients and load balancers retry elsewhere.
    public let isTemporary: Bool

    public init(_ code: Code, _ detail: String? = nil, temporary: Bool = false) {
        self.code = code
        self.detail = detail
        self.isTemporary = temporary
    }

    /// The OSStatus, e.g. -25300.
    public var status: Int32 { code.rawValue }
    /// Apple's constant name, e.g. `errSecItemNotFound`.
    public var name: String { code.name }
    /// Apple's message text for the status.
    public var message: String { code.message }

    public var description: String {
        detail.map { "\(name) (\(status)): \($0)" } ?? "\(name) (\(status))"
    }

    /// The OSStatus codes keychaind can answer (docs/keychain-semantics.md §6).
    public enum Code: Int32, CaseIterable, Sendable {
        case unimplemented = -4
        case diskFull = -34
        case io = -36
        case param = -50
        case allocate = -108
        case userCanceled = -128
        case badReq = -909
        case notAvailable = -25291
        case readOnly = -25292
        case authFailed = -25293
        case duplicateItem = -25299
        case itemNotFound = -25300
        case dataTooLarge = -25302
        case noSuchAttr = -25303
        case invalidItemRef = -25304
        case noSuchClass = -25306
        case interactionNotAllowed = -25308
        case readOnlyAttr = -25309
        case interactionRequired = -25315
        case dataNotAvailable = -25316
        case decode = -26275
        case missingEntitlement = -34018
        case restrictedAPI = -34020
        case invalidValue = -67694
        /// A refresh setting's provider gave no valid token (HTTP 502).
        case serviceNotAvailable = -67585

        public var name: String {
            switch self {
            case .unimplemented: "errSecUnimplemented"
            case .diskFull: "errSecDiskFull"
            case .io: "errSecIO"
            case .param: "errSecParam"
            case .allocate: "errSecAllocate"
            case .userCanceled: "errSecUserCanceled"
            case .badReq: "errSecBadReq"
            case .notAvailable: "errSecNotAvailable"
            case .readOnly: "errSecReadOnly"
            case .authFailed: "errSecAuthFailed"
            case .duplicateItem: "errSecDuplicateItem"
            case .itemNotFound: "errSecItemNotFound"
            case .dataTooLarge: "errSecDataTooLarge"
            case .noSuchAttr: "errSecNoSuchAttr"
            case .invalidItemRef: "errSecInvalidItemRef"
            case .noSuchClass: "errSecNoSuchClass"
            case .interactionNotAllowed: "errSecInteractionNotAllowed"
            case .readOnlyAttr: "errSecReadOnlyAttr"
            case .interactionRequired: "errSecInteractionRequired"
            case .dataNotAvailable: "errSecDataNotAvailable"
            case .decode: "errSecDecode"
            case .missingEntitlement: "errSecMissingEntitlement"
            case .restrictedAPI: "errSecRestrictedAPI"
            case .invalidValue: "errSecInvalidValue"
            case .serviceNotAvailable: "errSecServiceNotAvailable"
            }
        }

        public var message: String {
            switch self {
            case .unimplemented: "Function or operation not implemented."
            case .diskFull: "The disk is full."
            case .io: "I/O error."
            case .param: "One or more parameters passed to a function were not valid."
            case .allocate: "Failed to allocate memory."
            case .userCanceled: "User canceled the operation."
            case .badReq: "Bad parameter or invalid state for operation."
            case .notAvailable: "No keychain is available. You may need to restart your computer."
            case .readOnly: "This keychain cannot be modified."
            case .authFailed: "The user name or passphrase you entered is not correct."
            case .duplicateItem: "The specified item already exists in the keychain."
            case .itemNotFound: "The specified item could not be found in the keychain."
            case .dataTooLarge:
                "This item contains information which is too large or in a format that cannot be displayed."
            case .noSuchAttr: "The specified attribute does not exist."
            case .invalidItemRef:
                "The specified item is no longer valid. It may have been deleted from the keychain."
            case .noSuchClass: "The specified item does not appear to be a valid keychain item."
            case .interactionNotAllowed: "User interaction is not allowed."
            case .readOnlyAttr: "The specified attribute could not be modified."
            case .interactionRequired: "User interaction is required, but is currently not allowed."
            case .dataNotAvailable: "The contents of this item cannot be retrieved."
            case .decode: "Unable to decode the provided data."
            case .missingEntitlement: "A required entitlement isn't present."
            case .restrictedAPI: "Client is restricted and is not permitted to perform this operation."
            case .invalidValue: "An invalid value was detected."
            case .serviceNotAvailable: "The required service is not available."
            }
        }
    }
}

extension KeychainError {
    /// The message SecCopyErrorMessageString gives for any OSStatus: Apple's text for the codes
    /// keychaind knows, `No error.` for 0, and `OSStatus <n>` for the rest.
    public static func message(forStatus status: Int32) -> String {
        if status == 0 { return "No error." }
        return Code(rawValue: status)?.message ?? "OSStatus \(status)"
    }

    public static func param(_ detail: String? = nil) -> KeychainError { KeychainError(.param, detail) }
    public static func noSuchAttr(_ detail: String? = nil) -> KeychainError { KeychainError(.noSuchAttr, detail) }
    public static func noSuchClass(_ detail: String? = nil) -> KeychainError { KeychainError(.noSuchClass, detail) }
    public static func itemNotFound(_ detail: String? = nil) -> KeychainError { KeychainError(.itemNotFound, detail) }
    public static func duplicateItem(_ detail: String? = nil) -> KeychainError { KeychainError(.duplicateItem, detail) }
    public static func authFailed(_ detail: String? = nil) -> KeychainError { KeychainError(.authFailed, detail) }
    public static func missingEntitlement(_ detail: String? = nil) -> KeychainError {
        KeychainError(.missingEntitlement, detail)
    }
    public static func interactionNotAllowed(_ detail: String? = nil) -> KeychainError {
        KeychainError(.interactionNotAllowed, detail)
    }
    public static func decode(_ detail: String? = nil) -> KeychainError { KeychainError(.decode, detail) }
    public static func io(_ detail: String? = nil) -> KeychainError { KeychainError(.io, detail) }
}
