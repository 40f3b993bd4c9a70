public import Foundation
import KeychainCore

// The Core Foundation names that Security's key and access-control functions use in their
// signatures, so that Apple code calling them compiles unchanged. Like `CFDictionary` and
// `CFString` (SecItemConstants.swift), each is the Foundation type it bridges to on Apple
// platforms.

/// Apple's `CFData`: `data as CFData` and `SecKeyCopyExternalRepresentation(key, &error) as Data?` compile.
public typealias CFData = Data
/// Apple's `CFIndex`.
public typealias CFIndex = Int
/// Apple's `CFError`, toll-free bridged to `NSError` there too: errors of the SecKey functions are
/// in `NSOSStatusErrorDomain` with the OSStatus as `code`, as Apple's are, and
/// `error!.takeRetainedValue() as Error` works.
public typealias CFError = NSError

/// Apple's `CFAllocator`: only ever passed as `kCFAllocatorDefault` or `nil`.
public final class CFAllocator: Sendable {
    private init() {}
}

/// The default allocator (nil, as Apple's constant means "the default").
public let kCFAllocatorDefault: CFAllocator? = nil

/// The error's OSStatus.
public func CFErrorGetCode(_ error: CFError) -> CFIndex { error.code }

/// The error's description.
public func CFErrorCopyDescription(_ error: CFError) -> CFString { error.localizedDescription }

extension CFError {
    /// An error of Apple's form for `status`: domain `NSOSStatusErrorDomain`, the status as code and
    /// `description` (never key material) as the localized description.
    static func osStatus(_ status: OSStatus, _ description: String) -> CFError {
        CFError(domain: NSOSStatusErrorDomain, code: Int(status), userInfo: [NSLocalizedDescriptionKey: description])
    }

    /// The error for a `KeychainError`: its status, and its detail (else Apple's message) as the description.
    static func keychain(_ error: KeychainError) -> CFError { osStatus(error.status, error.detail ?? error.message) }

    /// Hands `error` to an Apple-style out-parameter, retained as Apple's are: the caller takes it
    /// with `takeRetainedValue()`.
    static func report(_ error: CFError, to out: UnsafeMutablePointer<Unmanaged<CFError>?>?) {
        out?.pointee = Unmanaged.passRetained(error)
    }
}
