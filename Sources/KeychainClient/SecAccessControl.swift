public import Foundation
import KeychainCore

/// Apple's `SecAccessControl`: an accessibility (`kSecAttrAccessible...`) and constraints on use.
/// As `kSecAttrAccessControl`, one with no constraint stores its accessibility (as Apple derives
/// `pdmn` from it); any constraint (user presence, biometry, passcode, watch, application
/// password, private key usage) needs the user or the Secure Enclave, which keychaind does not
/// have, and SecItemAdd / SecItemUpdate answer errSecUnimplemented rather than store the item
/// without the protection asked for.
public final class SecAccessControl: Sendable, CustomStringConvertible {
    /// The accessibility's Apple code (`ak`, `cku`, ...).
    let protection: String
    let flags: SecAccessControlCreateFlags

    init(protection: String, flags: SecAccessControlCreateFlags) {
        self.protection = protection
        self.flags = flags
    }

    public var description: String { "<SecAccessControl \(protection), flags \(flags.rawValue)>" }

    /// The accessibility to store, or errSecUnimplemented when a constraint is asked for.
    func accessibility() throws -> String {
        guard flags.isEmpty else {
            throw KeychainError(
                .unimplemented, "access control constraints need user authentication or the Secure Enclave")
        }
        return protection
    }
}

/// Apple's SecAccessControlCreateFlags (the same bits).
public struct SecAccessControlCreateFlags: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let userPresence = SecAccessControlCreateFlags(rawValue: 1 << 0)
    public static let biometryAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    public static let biometryCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    public static let devicePasscode = SecAccessControlCreateFlags(rawValue: 1 << 4)
    public static let watch = SecAccessControlCreateFlags(rawValue: 1 << 5)
    public static let or = SecAccessControlCreateFlags(rawValue: 1 << 14)
    public static let and = SecAccessControlCreateFlags(rawValue: 1 << 15)
    public static let privateKeyUsage = SecAccessControlCreateFlags(rawValue: 1 << 30)
    public static let applicationPassword = SecAccessControlCreateFlags(rawValue: 1 << 31)
    /// Older names of the biometry flags.
    public static let touchIDAny = biometryAny
    public static let touchIDCurrentSet = biometryCurrentSet
}

/// An access control of `protection` (a `kSecAttrAccessible...` constant) and `flags`; nil with
/// errSecParam when `protection` is not an accessibility.
public func SecAccessControlCreateWithFlags(
    _ allocator: CFAllocator?, _ protection: Any, _ flags: SecAccessControlCreateFlags,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? {
    guard let code = SecQuery.unwrap(protection) as? String,
        Enumeration.accessible.values.contains(where: { $0.code == code })
    else {
        CFError.report(.keychain(.param("protection must be a kSecAttrAccessible value")), to: error)
        return nil
    }
    return SecAccessControl(protection: code, flags: flags)
}
