import Foundation
import KeychainClient
import Testing

/// The library's SecureStore (seed 000's, ported) with the tutorial's tests, and the SecItem
/// functions' shapes and errors, against a real keychaind (the seeds' own sources run in
/// SeedCodeTests). The SecItem functions use the process-wide `KeychainClient.shared`, so this
/// suite is serialized and sets it.
@Suite(.serialized)
final class SecItemClientTests {
    let server: InProcessKeychaind
    var secureStoreWithGenericPwd: SecureStore!
    var secureStoreWithInternetPwd: SecureStore!

    init() throws {
        server = try InProcessKeychaind()
        KeychainClient.shared = try KeychainClient(
            baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, token: try server.adminToken(), timeout: 10)
        // setUp() of seed 000's SecureStoreTests.
        let genericPwdQueryable = GenericPasswordQueryable(service: "someService")
        secureStoreWithGenericPwd = SecureStore(secureStoreQueryable: genericPwdQueryable)
        let internetPwdQueryable = InternetPasswordQueryable(
            server: "someServer", port: 8080, path: "somePath", securityDomain: "someDomain",
            internetProtocol: .https, internetAuthenticationType: .httpBasic)
        secureStoreWithInternetPwd = SecureStore(secureStoreQueryable: internetPwdQueryable)
    }

    deinit {
        // tearDown()
        try? secureStoreWithGenericPwd.removeAllValues()
        try? secureStoreWithInternetPwd.removeAllValues()
        KeychainClient.shared = nil
        server.stop()
    }

    // MARK: seed 000: generic passwords

    @Test func testSaveGenericPassword() throws {
        try secureStoreWithGenericPwd.setValue("pwd_1234", for: "genericPassword")
    }

    @Test func testReadGenericPassword() throws {
        try secureStoreWithGenericPwd.setValue("pwd_1234", for: "genericPassword")
        let password = try secureStoreWithGenericPwd.getValue(for: "genericPassword")
        #expect("pwd_1234" == password)
    }

    @Test func testUpdateGenericPassword() throws {
        try secureStoreWithGenericPwd.setValue("pwd_1234", for: "genericPassword")
        try secureStoreWithGenericPwd.setValue("pwd_1235", for: "genericPassword")
        let password = try secureStoreWithGenericPwd.getValue(for: "genericPassword")
        #expect("pwd_1235" == password)
    }

    @Test func testRemoveGenericPassword() throws {
        try secureStoreWithGenericPwd.setValue("pwd_1234", for: "genericPassword")
        try secureStoreWithGenericPwd.removeValue(for: "genericPassword")
        #expect(try secureStoreWithGenericPwd.getValue(for: "genericPassword") == nil)
    }

    @Test func testRemoveAllGenericPasswords() throws {
        try secureStoreWithGenericPwd.setValue("pwd_1234", for: "genericPassword")
        try secureStoreWithGenericPwd.setValue("pwd_1235", for: "genericPassword2")
        try secureStoreWithGenericPwd.removeAllValues()
        #expect(try secureStoreWithGenericPwd.getValue(for: "genericPassword") == nil)
        #expect(try secureStoreWithGenericPwd.getValue(for: "genericPassword2") == nil)
    }

    // MARK: seed 000: internet passwords

    @Test func testSaveReadUpdateRemoveInternetPassword() throws {
        try secureStoreWithInternetPwd.setValue("pwd_1234", for: "internetPassword")
        #expect(try secureStoreWithInternetPwd.getValue(for: "internetPassword") == "pwd_1234")
        try secureStoreWithInternetPwd.setValue("pwd_1235", for: "internetPassword")
        #expect(try secureStoreWithInternetPwd.getValue(for: "internetPassword") == "pwd_1235")
        try secureStoreWithInternetPwd.removeValue(for: "internetPassword")
        #expect(try secureStoreWithInternetPwd.getValue(for: "internetPassword") == nil)
    }

    @Test func testRemoveAllInternetPasswords() throws {
        try secureStoreWithInternetPwd.setValue("pwd_1234", for: "internetPassword")
        try secureStoreWithInternetPwd.setValue("pwd_1235", for: "internetPassword2")
        try secureStoreWithInternetPwd.removeAllValues()
        #expect(try secureStoreWithInternetPwd.getValue(for: "internetPassword") == nil)
        #expect(try secureStoreWithInternetPwd.getValue(for: "internetPassword2") == nil)
        // The generic store is another class: untouched.
        try secureStoreWithGenericPwd.setValue("g", for: "a")
        try secureStoreWithInternetPwd.removeAllValues()
        #expect(try secureStoreWithGenericPwd.getValue(for: "a") == "g")
    }

    // MARK: result shapes and errors

    @Test func resultShapesAreApples() throws {
        for account in ["a", "b", "c"] {
            let add: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "shapes",
                kSecAttrAccount as String: account, kSecValueData as String: Data("secret-\(account)".utf8),
                kSecAttrLabel as String: "label \(account)",
            ]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        }
        var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "shapes"]
        var result: AnyObject?
        // Nothing asked: existence check, no result object.
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
        #expect(result == nil)
        // Data only, limit one: Data.
        query[kSecAttrAccount as String] = "b"
        query[kSecReturnData as String] = kCFBooleanTrue
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
        #expect(result as? Data == Data("secret-b".utf8))
        // Attributes and data: one dictionary keyed by Apple's codes.
        query[kSecReturnAttributes as String] = true
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
        let dictionary = try #require(result as? [String: Any])
        #expect(dictionary[kSecAttrAccount as String] as? String == "b")
        #expect(dictionary[kSecAttrLabel as String] as? String == "label b")
        #expect(dictionary[kSecValueData as String] as? Data == Data("secret-b".utf8))
        #expect(dictionary[kSecAttrCreationDate as String] is Date)
        #expect(dictionary[kSecAttrAccessible as String] as? String == kSecAttrAccessibleWhenUnlocked)
        // Limit all: an array, in creation order.
        query[kSecAttrAccount as String] = nil
        query[kSecReturnAttributes as String] = nil
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
        #expect((result as? [Data]) == ["a", "b", "c"].map { Data("secret-\($0)".utf8) })

        // Update every match, then a duplicate add and a miss, with Apple's statuses.
        let update: [String: Any] = [kSecAttrComment as String: "updated"]
        #expect(SecItemUpdate([kSecClass: kSecClassGenericPassword, kSecAttrService: "shapes"] as CFDictionary, update as CFDictionary) == errSecSuccess)
        let duplicate: NSDictionary = [kSecClass: kSecClassGenericPassword, kSecAttrService: "shapes", kSecAttrAccount: "a"]
        #expect(SecItemAdd(duplicate, nil) == errSecDuplicateItem)
        #expect(KeychainClient.lastSecItemError?.code == .duplicateItem)
        let missing: NSDictionary = [kSecClass: kSecClassGenericPassword, kSecAttrService: "nothing-here"]
        #expect(SecItemCopyMatching(missing, &result) == errSecItemNotFound)
        #expect(result == nil)
        #expect(SecItemDelete([kSecClass: kSecClassGenericPassword, kSecAttrService: "shapes"] as CFDictionary) == errSecSuccess)
        #expect(SecItemDelete(missing) == errSecItemNotFound)
        // Local and server-side refusals.
        #expect(SecItemAdd([kSecAttrService: "no class"] as CFDictionary, nil) == errSecParam)
        #expect(SecItemAdd([kSecClass: "nope"] as CFDictionary, nil) == errSecNoSuchClass)
        #expect(SecItemAdd([kSecClass: kSecClassGenericPassword, kSecAttrApplicationTag: Data()] as CFDictionary, nil) == errSecNoSuchAttr)
        #expect(SecItemUpdate(missing, [kSecAttrComment: "x"] as CFDictionary) == errSecItemNotFound)
        #expect(SecItemUpdate(duplicate, [kSecMatchLimit: kSecMatchLimitOne] as CFDictionary) == errSecNoSuchAttr)
        // Search keys in an update's or delete's query: keychaind's own refusal, with its detail.
        var limited = duplicate as! [String: Any]
        limited[kSecMatchLimit] = kSecMatchLimitAll
        #expect(SecItemUpdate(limited as CFDictionary, [kSecAttrComment: "x"] as CFDictionary) == errSecParam)
        #expect(KeychainClient.lastSecItemError?.detail == "\"limit\" is only for a search")
        #expect(SecItemDelete([kSecClass: kSecClassGenericPassword, kSecMatchCaseInsensitive: true] as CFDictionary) == errSecParam)
        #expect(KeychainClient.lastSecItemError?.detail == "\"caseInsensitive\" is only for a search")
        #expect(SecCopyErrorMessageString(errSecItemNotFound, nil) == "The specified item could not be found in the keychain.")
        #expect(SecCopyErrorMessageString(-1, nil) == "OSStatus -1")
    }

    @Test func aSecureStoreErrorCarriesTheServersError() throws {
        // A group this client lacks: errSecMissingEntitlement from the server, detail included.
        let store = SecureStore(secureStoreQueryable: GenericPasswordQueryable(service: "s", accessGroup: "not.mine"))
        #expect {
            try store.setValue("v", for: "a")
        } throws: { error in
            guard let error = error as? KeychainError else { return false }
            return error.code == .missingEntitlement && error.detail != nil
        }
    }

    @Test func synchronousCallsFromAsyncContextsDoNotDeadlock() async throws {
        // Many concurrent tasks each blocking a cooperative thread on a SecItem call.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<16 {
                group.addTask {
                    let store = SecureStore(secureStoreQueryable: GenericPasswordQueryable(service: "parallel"))
                    try store.setValue("v\(index)", for: "account\(index)")
                    #expect(try store.getValue(for: "account\(index)") == "v\(index)")
                }
            }
            try await group.waitForAll()
        }
    }
}
