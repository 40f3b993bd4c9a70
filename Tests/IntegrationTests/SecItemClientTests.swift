import Foundation
import KeychainClient
import Testing

/// The seeds' code, with only the import changed, against a real keychaind: seed 000's
/// SecureStore and its SecureStoreTests, seed 002's keyChaingTokenUtils. The SecItem functions
/// use the process-wide `KeychainClient.shared`, so this suite is serialized and sets it.
@Suite(.serialized)
final class SecItemClientTests {
    let server: KeychaindProcess
    var secureStoreWithGenericPwd: SecureStore!
    var secureStoreWithInternetPwd: SecureStore!

    init() throws {
        server = try KeychaindProcess()
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

    // MARK: seed 002: keyChaingTokenUtils through the SecItem functions

    @Test func keyChaingTokenUtilsFlow() throws {
        let utils = keyChaingTokenUtils()
        #expect(utils.getAuthorizationHeader() == nil)
        utils.save("Gus.Awesome.right", account: "accessToken", value: "token-1")
        #expect(utils.load("Gus.Awesome.right", account: "accessToken") == "token-1")
        // save = delete then add: saving again replaces.
        utils.save("Gus.Awesome.right", account: "accessToken", value: "token-2")
        #expect(utils.load("Gus.Awesome.right", account: "accessToken") == "token-2")
        #expect(utils.getAuthorizationHeader() == ["Authorization": "Bearer token-2"])
        // The token route sees the same item.
        let header = try server.client().send("GET", "/v1/tokens/Gus.Awesome.right/authorization", token: try server.adminToken())
        #expect(header.json["Authorization"] as? String == "Bearer token-2")
        utils.delete("Gus.Awesome.right", account: "accessToken")
        #expect(utils.load("Gus.Awesome.right", account: "accessToken") == nil)
        #expect(utils.getAuthorizationHeader() == nil)
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

/// Seed 002's wrapper, as written there (typos fixed so that it compiles: `account: String`,
/// `kSecMatchLimitOne`, `SecItemCopyMatching`, a `return nil`; `HTTPHeaders` is Alamofire's
/// `[String: String]`-like type).
typealias HTTPHeaders = [String: String]

class keyChaingTokenUtils {
    func save(_ service: String, account: String, value: String) {
        let keyChainQuery: NSDictionary = [
            kSecClass: kSecClassGenericPassword,
            kSecAttrService: service,
            kSecAttrAccount: account,
            kSecValueData: value.data(using: .utf8, allowLossyConversion: false)!,
        ]
        SecItemDelete(keyChainQuery)
        let status: OSStatus = SecItemAdd(keyChainQuery, nil)
        assert(status == noErr, "토큰 값 저장에 실패했습니다.")
        NSLog("status=\(status)")
    }

    func load(_ service: String, account: String) -> String? {
        let keyChainQuery: NSDictionary = [
            kSecClass: kSecClassGenericPassword,
            kSecAttrService: service,
            kSecAttrAccount: account,
            kSecReturnData: kCFBooleanTrue!,
            kSecMatchLimit: kSecMatchLimitOne,
        ]
        var dataTypeRef: AnyObject?
        let status = SecItemCopyMatching(keyChainQuery, &dataTypeRef)
        if status == errSecSuccess {
            let retrievedData = dataTypeRef as! Data
            let value = String(data: retrievedData, encoding: String.Encoding.utf8)
            return value
        } else {
            print("키 체인에서 불러올 데이터가 없습니다. Status code \(status)")
            return nil
        }
    }

    func delete(_ service: String, account: String) {
        let keyChainQuery: NSDictionary = [
            kSecClass: kSecClassGenericPassword,
            kSecAttrService: service,
            kSecAttrAccount: account,
        ]
        let status = SecItemDelete(keyChainQuery)
        assert(status == noErr, "토큰 값 삭제에 실패")
        NSLog("status=\(status)")
    }

    func getAuthorizationHeader() -> HTTPHeaders? {
        let serviceID = "Gus.Awesome.right"
        if let accessToken = self.load(serviceID, account: "accessToken") {
            return ["Authorization": "Bearer \(accessToken)"] as HTTPHeaders
        } else {
            return nil
        }
    }
}
