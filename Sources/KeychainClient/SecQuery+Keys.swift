import Foundation
import KeychainAPI
import KeychainCore

// What a SecItem dictionary's SecKey, SecAccessControl and kSecUse entries become.
extension SecQuery {
    /// kSecUse keys accepted and ignored: keychaind is the data-protection keychain and no item in
    /// it needs user authentication (docs/decisions.md, "Constants Apple code passes").
    static let ignoredKeys: Set<String> = [
        kSecUseDataProtectionKeychain, kSecUseAuthenticationContext, kSecUseAuthenticationUI, kSecUseOperationPrompt,
        kSecUseNoAuthenticationUI,
    ]

    /// A SecAccessControl as the `accessible` value it stands for.
    static func accessibility(of value: Any) throws -> AttributeValue {
        guard let control = value as? SecAccessControl else { throw KeychainError.param("not a SecAccessControl") }
        return try Self.value(try control.accessibility(), for: .accessible)
    }

    /// Takes a kSecValueRef key into the request. On add, the item is the key's external
    /// representation with the key's attributes (type, class, sizes, applicationLabel = SHA-1 of
    /// the public key, the can* flags), where the caller's own attributes win, as Apple merges
    /// them. In a search, update or delete the key stands for its class, type, size and label.
    mutating func takeAttributes(of key: SecKey, adding: Bool) throws {
        guard itemClass == .key else { throw KeychainError.param("kSecValueRef holds a key, not a \(itemClass.rawValue)") }
        let given = Set(attributes.map(\.0))
        let keyAttributes = adding ? try key.attributes(includingData: false) : try key.identifyingAttributes()
        for (code, value) in keyAttributes.sorted(by: { $0.key < $1.key }) {
            guard let attribute = Self.attribute(code: code, of: .key), !given.contains(attribute) else { continue }
            attributes.append((attribute, try Self.value(value, for: attribute)))
        }
        guard adding else { return }
        guard valueData == nil else { throw KeychainError.param("kSecValueRef and kSecValueData together") }
        valueData = try key.key.externalRepresentation()
    }

    /// The SecKey of an answered key item (its data read by its keyType and keyClass).
    static func key(of item: AnsweredItem) throws -> SecKey {
        var bytes = item.data?.copyBytes() ?? []
        defer { SecretBytes.wipe(&bytes) }
        func name(_ attribute: Attribute) -> String? {
            if case .string(let name) = item.attributes?[attribute] { return name }
            return nil
        }
        return try SecKey(itemData: bytes, keyType: name(.keyType), keyClass: name(.keyClass))
    }
}
