// Seeds 001 and 004 ("Storing Keys in the Keychain", Apple's article as the notes copy it). Each
// code block of the notes is the body of one function here, line for line; what the blocks leave
// to the reader is given as a parameter: the Xcode placeholders `<# a key #>` (the key to store)
// and `<# an error #>` (here `SeedError(status:)`), the `tag` of the first block, and the query of
// the last block, which the notes call `query` though they built it as `getquery`.
// Seed 004 misspells two names (`kSeecValueRef`, `addqury`); they are corrected, as they must be
// for Apple's compiler too. `import Security` is `import KeychainClient`.
import Foundation
import KeychainClient

/// What the notes' `<# an error #>` stands for: the failed call's status.
struct SeedError: Error, Equatable {
    let status: OSStatus
}

enum Seed001 {
    /// "Create a Query Dictionary" and "Store the Item".
    static func store(_ aKey: SecKey) throws {
        let key = aKey
        let tag = "com.example.keys.mykey".data(using: .utf8)!
        let addquery: [String: Any] = [kSecClass as String: kSecClassKey,
                                       kSecAttrApplicationTag as String: tag,
                                       kSecValueRef as String: key]

        let status = SecItemAdd(addquery as CFDictionary, nil)
        guard status == errSecSuccess else { throw SeedError(status: status) }
    }

    /// "Retrieve the Item": the query.
    static func getquery(_ tag: Data) -> [String: Any] {
        let getquery: [String: Any] = [kSecClass as String: kSecClassKey,
                                       kSecAttrApplicationTag as String: tag,
                                       kSecAttrKeyType as String: kSecAttrKeyTypeRSA,
                                       kSecReturnRef as String: true]
        return getquery
    }

    /// "Retrieve the Item": the search.
    static func retrieve(_ query: [String: Any]) throws -> SecKey {
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        guard status == errSecSuccess else { throw SeedError(status: status) }
        let key = item as! SecKey
        return key
    }
}

enum Seed004 {
    /// "Create a Query Dictionary" and "Store the Item".
    static func store(_ aKey: SecKey) throws {
        let key = aKey
        let tag = "com.example.keys.myKey".data(using: .utf8)!
        let addquery: [String: Any] = [kSecClass as String: kSecClassKey,
                                       kSecAttrApplicationTag as String: tag,
                                       kSecValueRef as String: key]

        let status = SecItemAdd(addquery as CFDictionary, nil)
        guard status == errSecSuccess else { throw SeedError(status: status) }
    }

    /// "Retrieve the Item": the query.
    static func getquery(_ tag: Data) -> [String: Any] {
        let getquery: [String: Any] = [kSecClass as String: kSecClassKey,
                                       kSecAttrApplicationTag as String: tag,
                                       kSecAttrKeyType as String: kSecAttrKeyTypeRSA,
                                       kSecReturnRef as String: true]
        return getquery
    }

    /// "Retrieve the Item": the search.
    static func retrieve(_ query: [String: Any]) throws -> SecKey {
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        guard status == errSecSuccess else { throw SeedError(status: status) }
        let key = item as! SecKey
        return key
    }
}
