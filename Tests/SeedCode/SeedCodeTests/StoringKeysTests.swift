// Seeds 001 and 004's key storage, run against keychaind (the tests are the harness's).
import Foundation
import KeychainClient
import XCTest

final class StoringKeysTests: LiveKeychaindTestCase {
    override func tearDown() {
        SecItemDelete([kSecClass: kSecClassKey] as CFDictionary)
        super.tearDown()
    }

    /// Seed 001: store a key made in memory, get it back by tag and type as `item as! SecKey`;
    /// it is the same key (same bytes, and its signatures verify with the original's public key).
    func testSeed001StoresAndRetrievesAKey() throws {
        let key = try AppleKeyArticles.generateKey(type: kSecAttrKeyTypeRSA, bits: 2048)
        try Seed001.store(key)
        let retrieved = try Seed001.retrieve(Seed001.getquery("com.example.keys.mykey".data(using: .utf8)!))
        XCTAssertEqual(try external(retrieved), try external(key))
        let message = Data("seed 001".utf8)
        let signature = try AppleKeyArticles.sign(message, with: retrieved, .rsaSignatureMessagePKCS1v15SHA256)
        try AppleKeyArticles.verify(signature, of: message, with: key, .rsaSignatureMessagePKCS1v15SHA256)
        // Storing the same key again is a duplicate (same tag, type, class, size and label).
        XCTAssertThrowsError(try Seed001.store(key)) { XCTAssertEqual($0 as? SeedError, SeedError(status: errSecDuplicateItem)) }
    }

    /// Seed 004: the same with its tag; another tag finds nothing.
    func testSeed004StoresAndRetrievesAKey() throws {
        let key = try AppleKeyArticles.roundTrip(try AppleKeyArticles.generateKey(type: kSecAttrKeyTypeRSA, bits: 2048))
        try Seed004.store(key)
        let retrieved = try Seed004.retrieve(Seed004.getquery("com.example.keys.myKey".data(using: .utf8)!))
        XCTAssertEqual(try external(retrieved), try external(key))
        XCTAssertThrowsError(try Seed004.retrieve(Seed004.getquery(Data("com.example.keys.other".utf8)))) {
            XCTAssertEqual($0 as? SeedError, SeedError(status: errSecItemNotFound))
        }
    }

    /// "Refine the Search": with kSecMatchLimitAll the search gives every key of the tag as an
    /// array of SecKey; without it, the first one. SecItemDelete of the tag removes them all.
    func testRefineTheSearch() throws {
        let first = try AppleKeyArticles.generateKey(type: kSecAttrKeyTypeRSA, bits: 2048)
        let second = try AppleKeyArticles.generateKey(type: kSecAttrKeyTypeRSA, bits: 2048)
        try Seed001.store(first)
        try Seed001.store(second)
        let tag = "com.example.keys.mykey".data(using: .utf8)!
        XCTAssertEqual(try external(Seed001.retrieve(Seed001.getquery(tag))), try external(first))
        var query = Seed001.getquery(tag)
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        var items: CFTypeRef?
        XCTAssertEqual(SecItemCopyMatching(query as CFDictionary, &items), errSecSuccess)
        let keys = try XCTUnwrap(items as? [SecKey])
        XCTAssertEqual(try keys.map(external), [try external(first), try external(second)])
        XCTAssertEqual(SecItemDelete([kSecClass: kSecClassKey, kSecAttrApplicationTag: tag] as CFDictionary), errSecSuccess)
        XCTAssertThrowsError(try Seed001.retrieve(Seed001.getquery(tag)))
    }

    /// "Generating New Cryptographic Keys": kSecAttrIsPermanent in kSecPrivateKeyAttrs stores the
    /// private key (and only it) with its tag, as Apple does; a second key with the same tag is
    /// another item (its applicationLabel differs).
    func testAPermanentKeyIsStoredWhenCreated() throws {
        let tag = Data("com.example.keys.permanent".utf8)
        let key = try AppleKeyArticles.generatePermanentKey(tag: tag)
        var query: [String: Any] = [
            kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag,
            kSecReturnRef as String: true, kSecReturnAttributes as String: true,
        ]
        var item: CFTypeRef?
        XCTAssertEqual(SecItemCopyMatching(query as CFDictionary, &item), errSecSuccess)
        let found = try XCTUnwrap(item as? [String: Any])
        XCTAssertEqual(try external(try XCTUnwrap(found[kSecValueRef as String] as? SecKey)), try external(key))
        XCTAssertEqual(found[kSecAttrKeyClass as String] as? String, kSecAttrKeyClassPrivate)
        XCTAssertEqual(found[kSecAttrKeyType as String] as? String, kSecAttrKeyTypeRSA)
        XCTAssertEqual(found[kSecAttrKeySizeInBits as String] as? Int, 2048)
        XCTAssertEqual(found[kSecAttrCanSign as String] as? Bool, true)
        let attributes = try XCTUnwrap(SecKeyCopyAttributes(key) as? [String: Any])
        XCTAssertEqual(found[kSecAttrApplicationLabel as String] as? Data, attributes[kSecAttrApplicationLabel as String] as? Data)
        query[kSecAttrKeyClass as String] = kSecAttrKeyClassPublic
        XCTAssertEqual(SecItemCopyMatching(query as CFDictionary, &item), errSecItemNotFound)
        _ = try AppleKeyArticles.generatePermanentKey(tag: tag)
        query[kSecAttrKeyClass as String] = nil
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        XCTAssertEqual(SecItemCopyMatching(query as CFDictionary, &item), errSecSuccess)
        XCTAssertEqual((item as? [Any])?.count, 2)
    }

    private func external(_ key: SecKey) throws -> Data {
        var error: Unmanaged<CFError>?
        guard let data = SecKeyCopyExternalRepresentation(key, &error) as Data? else {
            throw error!.takeRetainedValue() as Error
        }
        return data
    }
}
