import Foundation
import KeychainCore

/// What `SecKeyCreateWithData` reads from its attributes: how to read the bytes.
struct KeyDescription {
    let family: OpenSSLKey.Family
    let isPrivate: Bool

    init(_ dictionary: CFDictionary) throws {
        let entries = KeyParameters.entries(dictionary)
        family = try KeyParameters.family(entries[kSecAttrKeyType])
        switch KeyParameters.code(entries[kSecAttrKeyClass]) {
        case kSecAttrKeyClassPrivate: isPrivate = true
        case kSecAttrKeyClassPublic: isPrivate = false
        case nil: throw KeychainError.param("kSecAttrKeyClass is missing")
        default: throw KeychainError.param("kSecAttrKeyClass must be private or public")
        }
    }
}

enum KeyParameters {
    /// The dictionary's entries by key, optionals stored as `Any` unwrapped (nil ones dropped).
    static func entries(_ dictionary: CFDictionary) -> [String: Any] {
        var entries: [String: Any] = [:]
        for (key, value) in dictionary {
            if let key = key as? String, let value = SecQuery.unwrap(value) { entries[key] = value }
        }
        return entries
    }

    static func nested(_ value: Any?, _ name: String) throws -> [String: Any] {
        guard let value else { return [:] }
        if let dictionary = value as? [String: Any] { return dictionary.compactMapValues { SecQuery.unwrap($0) } }
        guard let dictionary = value as? NSDictionary else { throw KeychainError.param("\(name) must be a dictionary") }
        return entries(dictionary)
    }

    /// An enumerated value given as Apple's constant or as a number (`42`).
    static func code(_ value: Any?) -> String? {
        if let text = value as? String { return text }
        return value.flatMap { SecQuery.integer($0) }.map { String($0) }
    }

    static func family(_ value: Any?) throws -> OpenSSLKey.Family {
        switch code(value) {
        case kSecAttrKeyTypeRSA: .rsa
        case kSecAttrKeyTypeECSECPrimeRandom: .ec
        case nil: throw KeychainError.param("kSecAttrKeyType is missing")
        default: throw KeychainError.param("unsupported kSecAttrKeyType \"\(code(value)!)\"")
        }
    }

    static func isPermanent(_ attributes: [String: Any]) throws -> Bool {
        guard let value = attributes[kSecAttrIsPermanent] else { return false }
        return try SecQuery.bool(value, kSecAttrIsPermanent)
    }

    /// Keys on a token (the Secure Enclave, or a smart card's) cannot be made or stored by
    /// keychaind, which has no token: errSecUnimplemented (docs/decisions.md, "Constants Apple code passes").
    static func tokenRefusal(_ token: Any) -> KeychainError {
        let name = token as? String == kSecAttrTokenIDSecureEnclave ? "the Secure Enclave" : "token \"\(token)\""
        return KeychainError(.unimplemented, "keys on \(name) are not available through keychaind")
    }
}
