import Testing

/// An error body of openapi.yaml (`Error.errSec*`): the shared `Error` object (`value1`) with its
/// OSStatus, constant and message pinned by the second part of the `allOf`.
protocol ErrorAnswer {
    var value1: Components.Schemas._Error { get }
}

extension Components.Schemas.Error_errSecParam: ErrorAnswer {}
extension Components.Schemas.Error_errSecNoSuchAttr: ErrorAnswer {}
extension Components.Schemas.Error_errSecAuthFailed: ErrorAnswer {}
extension Components.Schemas.Error_errSecMissingEntitlement: ErrorAnswer {}
extension Components.Schemas.Error_errSecItemNotFound: ErrorAnswer {}
extension Components.Schemas.Error_errSecNoSuchClass: ErrorAnswer {}
extension Components.Schemas.Error_errSecUnimplemented: ErrorAnswer {}
extension Components.Schemas.Error_errSecDuplicateItem: ErrorAnswer {}
extension Components.Schemas.Error_errSecInteractionNotAllowed: ErrorAnswer {}
extension Components.Schemas.Error_errSecNotAvailable: ErrorAnswer {}
extension Components.Schemas.Error_errSecIO: ErrorAnswer {}
extension Components.Schemas.Error_errSecDecode: ErrorAnswer {}
extension Components.Schemas.Error_errSecDiskFull: ErrorAnswer {}
extension Components.Schemas.Error_errSecServiceNotAvailable: ErrorAnswer {}

// The responses whose body is one of several errors.
extension Components.Responses.BadRequest.Body.JsonPayload {
    var answer: any ErrorAnswer {
        switch self {
        case .Error_errSecParam(let error): error
        case .Error_errSecNoSuchAttr(let error): error
        }
    }
}

extension Components.Responses.NotFound.Body.JsonPayload {
    var answer: any ErrorAnswer {
        switch self {
        case .Error_errSecItemNotFound(let error): error
        case .Error_errSecNoSuchClass(let error): error
        case .Error_errSecUnimplemented(let error): error
        }
    }
}

extension Components.Responses.NotFound_token.Body.JsonPayload {
    var answer: any ErrorAnswer {
        switch self {
        case .Error_errSecItemNotFound(let error): error
        case .Error_errSecUnimplemented(let error): error
        }
    }
}

extension Components.Responses.NotFound_refresh.Body.JsonPayload {
    var answer: any ErrorAnswer {
        switch self {
        case .Error_errSecItemNotFound(let error): error
        case .Error_errSecUnimplemented(let error): error
        }
    }
}

/// getAuthorization's own 404 (an expired or empty token, or no route).
extension Operations.GetAuthorization.Output.NotFound.Body.JsonPayload {
    var answer: any ErrorAnswer {
        switch self {
        case .Error_errSecItemNotFound(let error): error
        case .Error_errSecUnimplemented(let error): error
        }
    }
}

/// revokeTokenByAccessor's own 404 (no token has the accessor, or no route).
extension Operations.RevokeTokenByAccessor.Output.NotFound.Body.JsonPayload {
    var answer: any ErrorAnswer {
        switch self {
        case .Error_errSecItemNotFound(let error): error
        case .Error_errSecUnimplemented(let error): error
        }
    }
}

extension Components.Responses.Locked.Body.JsonPayload {
    var answer: any ErrorAnswer {
        switch self {
        case .Error_errSecInteractionNotAllowed(let error): error
        case .Error_errSecNotAvailable(let error): error
        case .Error_errSecIO(let error): error
        }
    }
}

/// Expects Apple's OSStatus and constant name in an error answer, and a message.
func expectError(
    _ answer: any ErrorAnswer, _ constant: String, _ status: Int, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(answer.value1.error == constant, sourceLocation: sourceLocation)
    #expect(answer.value1.status == status, sourceLocation: sourceLocation)
    #expect(!answer.value1.message.isEmpty, sourceLocation: sourceLocation)
}

/// A login's own refusals (`LoginError.errSec*`): the error shape plus Vault's `errors`.
protocol LoginErrorAnswer {
    var value1: Components.Schemas.LoginError { get }
}

extension Components.Schemas.LoginError_errSecAuthFailed: LoginErrorAnswer {}

func expectError(
    _ answer: any LoginErrorAnswer, _ constant: String, _ status: Int, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(answer.value1.error == constant, sourceLocation: sourceLocation)
    #expect(answer.value1.status == status, sourceLocation: sourceLocation)
    #expect(!answer.value1.message.isEmpty && !answer.value1.errors.isEmpty, sourceLocation: sourceLocation)
}

/// getLoginRole's and deleteLoginRole's 404 (no role of the name, or no route).
extension Components.Responses.NotFound_loginRole.Body.JsonPayload {
    var answer: any ErrorAnswer {
        switch self {
        case .Error_errSecItemNotFound(let error): error
        case .Error_errSecUnimplemented(let error): error
        }
    }
}

extension Components.Responses.NotFound_connect.Body.JsonPayload {
    var answer: any ErrorAnswer {
        switch self {
        case .Error_errSecItemNotFound(let error): error
        case .Error_errSecUnimplemented(let error): error
        }
    }
}
