import Foundation
import KeychainClient
import KeychaindTesting
import Testing

/// SecKey items, delete-all and the constants Apple code passes, through the SecItem functions
/// against the real keychaind (in the serialized suite that owns `KeychainClient.shared`).
extension SecItemClientTests {
    private func rsaKey(permanentTag tag: Data? = nil) throws -> SecKey {
        var parameters: [String: Any] = [kSecAttrKeyType as String: kSecAttrKeyTypeRSA, kSecAttrKeySizeInBits as String: 2048]
        if let tag { parameters[kSecPrivateKeyAttrs as String] = [kSecAttrIsPermanent: true, kSecAttrApplicationTag: tag] }
        var error: Unmanaged<CFError>?
        guard let key = SecKeyCreateRandomKey(parameters as CFDictionary, &error) else { throw error!.takeRetainedValue() }
        return key
    }

    private func bytes(_ key: SecKey) -> Data? { SecKeyCopyExternalRepresentation(key, nil) }

    @Test func aDeleteNamingOnlyTheClassDeletesTheClassAsApplesDoes() throws {
        for (service, account) in [("one", "a"), ("one", "b"), ("two", "a")] {
            let add: NSDictionary = [kSecClass: kSecClassGenericPassword, kSecAttrService: service, kSecAttrAccount: account]
            #expect(SecItemAdd(add, nil) == errSecSuccess)
        }
        let internet: NSDictionary = [kSecClass: kSecClassInternetPassword, kSecAttrServer: "example.com"]
        #expect(SecItemAdd(internet, nil) == errSecSuccess)
        #expect(SecItemDelete([kSecClass: kSecClassGenericPassword] as CFDictionary) == errSecSuccess)
        #expect(SecItemCopyMatching([kSecClass: kSecClassGenericPassword] as CFDictionary, nil) == errSecItemNotFound)
        #expect(SecItemDelete([kSecClass: kSecClassGenericPassword] as CFDictionary) == errSecItemNotFound)
        // Another class is untouched.
        #expect(SecItemCopyMatching(internet, nil) == errSecSuccess)
        #expect(SecItemDelete(internet) == errSecSuccess)
    }

    @Test func keysGoInByValueRefAndComeBackByReturnRef() throws {
        let key = try rsaKey()
        let tag = Data("com.example.keys.refs".utf8)
        let add: [String: Any] = [kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag, kSecValueRef as String: key]
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        // Ref, data and attributes: one dictionary; the data is the key's external representation.
        var result: CFTypeRef?
        let find: [String: Any] = [
            kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag, kSecReturnRef as String: true,
            kSecReturnData as String: true, kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll,
        ]
        #expect(SecItemCopyMatching(find as CFDictionary, &result) == errSecSuccess)
        let items = try #require(result as? [[String: Any]])
        #expect(items.count == 1)
        let found = try #require(items.first?[kSecValueRef as String] as? SecKey)
        #expect(bytes(found) == bytes(key))
        #expect(items.first?[kSecValueData as String] as? Data == bytes(key))
        #expect(items.first?[kSecAttrKeyClass as String] as? String == kSecAttrKeyClassPrivate)
        #expect(items.first?[kSecAttrEffectiveKeySize as String] as? Int == 2048)
        // The ref stands for its item in a delete, with or without a class.
        #expect(SecItemDelete([kSecValueRef: key] as CFDictionary) == errSecSuccess)
        #expect(SecItemCopyMatching(find as CFDictionary, &result) == errSecItemNotFound)
    }

    /// A key's applicationLabel is what Apple computes: the server joins a private key stored by
    /// kSecValueRef to the certificate of its public key (publicKeyHash, from the certificate's
    /// bytes) as an identity.
    @Test(arguments: [(["rsa:2048"], kSecAttrKeyTypeRSA), (["ec", "-pkeyopt", "ec_paramgen_curve:P-256"], kSecAttrKeyTypeEC)])
    func aStoredKeyJoinsItsCertificateAsAnIdentity(newKey: [String], keyType: CFString) throws {
        let (certificatePEM, keyPEM) = try MetricsAndTLSTests.selfSignedCertificate(newKey: newKey)
        let directory = KeychaindProcess.temporaryDirectory()
        let certificateFile = directory.appendingPathComponent("cert.der"), keyFile = directory.appendingPathComponent("key.der")
        #expect(try Command.run(["openssl", "x509", "-in", certificatePEM, "-outform", "DER", "-out", certificateFile.path]).status == 0)
        // Apple's external representation: PKCS #1 for RSA; for EC, the X9.63 bytes SecKey writes,
        // reached from the SEC1 form through the key's own round trip below.
        let keyArguments = keyType == kSecAttrKeyTypeRSA ? ["rsa", "-traditional"] : ["ec"]
        #expect(try Command.run(["openssl"] + keyArguments + ["-in", keyPEM, "-outform", "DER", "-out", keyFile.path]).status == 0)
        let certificate = try Data(contentsOf: certificateFile)
        var keyBytes = try Data(contentsOf: keyFile)
        if keyType == kSecAttrKeyTypeEC {
            // SEC1 ECPrivateKey for P-256: the 32-byte scalar at offset 7, the 65-byte point at the end.
            keyBytes = keyBytes.suffix(65) + keyBytes.dropFirst(7).prefix(32)
        }
        let options: [String: Any] = [kSecAttrKeyType as String: keyType, kSecAttrKeyClass as String: kSecAttrKeyClassPrivate]
        let key = try #require(SecKeyCreateWithData(keyBytes as CFData, options as CFDictionary, nil))
        #expect(SecItemAdd([kSecClass: kSecClassCertificate, kSecValueData: certificate] as CFDictionary, nil) == errSecSuccess)
        let identity: NSDictionary = [kSecClass: kSecClassIdentity, kSecReturnAttributes: true]
        #expect(SecItemCopyMatching(identity, nil) == errSecItemNotFound)
        #expect(SecItemAdd([kSecClass: kSecClassKey, kSecValueRef: key] as CFDictionary, nil) == errSecSuccess)
        var result: CFTypeRef?
        #expect(SecItemCopyMatching(identity, &result) == errSecSuccess)
        let attributes = try #require(result as? [String: Any])
        #expect(attributes[kSecAttrPublicKeyHash as String] as? Data
            == (SecKeyCopyAttributes(key) as? [String: Any])?[kSecAttrApplicationLabel as String] as? Data)
    }

    @Test func refsOtherThanKeysAreRefused() throws {
        let key = try rsaKey()
        #expect(SecItemAdd([kSecClass: kSecClassGenericPassword, kSecValueRef: key] as CFDictionary, nil) == errSecParam)
        #expect(SecItemAdd([kSecClass: kSecClassCertificate, kSecValueRef: Data([1])] as CFDictionary, nil) == errSecUnimplemented)
        #expect(SecItemAdd([kSecClass: kSecClassKey, kSecValueRef: key, kSecValueData: Data([1])] as CFDictionary, nil) == errSecParam)
    }

    @Test func secureEnclaveKeysAreUnimplemented() throws {
        let parameters: [String: Any] = [
            kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits as String: 256,
            kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave,
            kSecPrivateKeyAttrs as String: [kSecAttrIsPermanent as String: true],
        ]
        var error: Unmanaged<CFError>?
        #expect(SecKeyCreateRandomKey(parameters as CFDictionary, &error) == nil)
        let failure = try #require(error?.takeRetainedValue())
        #expect(failure.domain == NSOSStatusErrorDomain && failure.code == Int(errSecUnimplemented))
        let add: NSDictionary = [kSecClass: kSecClassKey, kSecValueRef: try rsaKey(), kSecAttrTokenID: kSecAttrTokenIDSecureEnclave]
        #expect(SecItemAdd(add, nil) == errSecUnimplemented)
    }

    @Test func constantsAppleCodePassesAreHonouredOrIgnored() throws {
        // kSecUse keys that change nothing in keychaind.
        let add: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "constants",
            kSecAttrAccount as String: "plain", kSecUseDataProtectionKeychain as String: true,
            kSecValueData as String: Data("v".utf8),
        ]
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        let find: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "constants",
            kSecAttrAccount as String: "plain", kSecUseDataProtectionKeychain as String: true,
            kSecUseAuthenticationUI as String: kSecUseAuthenticationUISkip, kSecUseOperationPrompt as String: "Unlock",
            kSecUseAuthenticationContext as String: NSObject(), kSecReturnData as String: true,
        ]
        var result: CFTypeRef?
        #expect(SecItemCopyMatching(find as CFDictionary, &result) == errSecSuccess)
        #expect(result as? Data == Data("v".utf8))
        // kSecAttrAccessControl without constraints: its accessibility is stored.
        var error: Unmanaged<CFError>?
        let control = try #require(SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleAfterFirstUnlock, [], &error))
        var controlled = add
        controlled[kSecAttrAccount as String] = "controlled"
        controlled[kSecAttrAccessControl as String] = control
        #expect(SecItemAdd(controlled as CFDictionary, nil) == errSecSuccess)
        var attributes = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "controlled", kSecReturnAttributes as String: true] as [String: Any]
        #expect(SecItemCopyMatching(attributes as CFDictionary, &result) == errSecSuccess)
        #expect((result as? [String: Any])?[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlock)
        // With a constraint that needs the user: refused, not stored without it.
        let presence = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, .userPresence, nil))
        controlled[kSecAttrAccount as String] = "presence"
        controlled[kSecAttrAccessControl as String] = presence
        #expect(SecItemAdd(controlled as CFDictionary, nil) == errSecUnimplemented)
        #expect(SecAccessControlCreateWithFlags(nil, "not an accessibility", [], &error) == nil)
        #expect(error?.takeRetainedValue().code == Int(errSecParam))
        // kSecAttrSynchronizableAny finds synchronizable and other items alike.
        var synchronized = add
        synchronized[kSecAttrAccount as String] = "synchronized"
        synchronized[kSecAttrSynchronizable as String] = kCFBooleanTrue
        #expect(SecItemAdd(synchronized as CFDictionary, nil) == errSecSuccess)
        attributes = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "constants",
            kSecAttrSynchronizable as String: kSecAttrSynchronizableAny, kSecMatchLimit as String: kSecMatchLimitAll,
            kSecReturnAttributes as String: true,
        ]
        #expect(SecItemCopyMatching(attributes as CFDictionary, &result) == errSecSuccess)
        #expect((result as? [Any])?.count == 3)
        attributes[kSecAttrSynchronizable as String] = nil
        #expect(SecItemCopyMatching(attributes as CFDictionary, &result) == errSecSuccess)
        #expect((result as? [Any])?.count == 2)
        #expect(SecItemDelete([kSecClass: kSecClassGenericPassword, kSecAttrSynchronizable: kSecAttrSynchronizableAny] as CFDictionary) == errSecSuccess)
    }
}
