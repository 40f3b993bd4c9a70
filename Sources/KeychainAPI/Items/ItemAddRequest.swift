public import KeychainCore

/// The body of an add (`POST /items/{class}`, SecItemAdd): the new item's attributes, its
/// `value`/`data` (an identity: `certificate` and `privateKey`), and what the answer returns.
public struct ItemAddRequest: Sendable {
    public var item: NewItem
    public var returnKinds: ReturnKinds

    public init(item: NewItem, returnKinds: ReturnKinds = .attributes) {
        self.item = item
        self.returnKinds = returnKinds
    }

    /// Decodes a body. Unknown names are errSecNoSuchAttr; read-only attributes, control keys
    /// an add does not take, bad values and conflicts errSecParam.
    public init(decoding body: JSONBody, of itemClass: ItemClass) throws {
        self.init(item: NewItem(itemClass: itemClass))
        try ItemArguments.rejectDuplicates(body.members) { $0.0 }
        var sawSecret = false
        for (name, value) in body.members {
            if let control = ItemOperation.Control(rawValue: name) {
                if let refusal = ItemOperation.add.refusal(of: control) { throw refusal }
                guard case .string(let text) = value else { throw ItemArguments.returnError }
                returnKinds = try ItemArguments.returnKinds(text)
                continue
            }
            switch name {
            case "persistentRef":
                throw KeychainError.param("\"persistentRef\" is read-only")
            case "value" where itemClass != .identity, "data" where itemClass != .identity:
                if sawSecret { throw KeychainError.param("give \"value\" or \"data\", not both") }
                sawSecret = true
                item.secret = try ItemArguments.secret(name, value)
            case "certificate" where itemClass == .identity:
                item.secret = try ItemArguments.secretBytes(name, value)
            case "privateKey" where itemClass == .identity:
                item.privateKey = try ItemArguments.secretBytes(name, value)
            case "value", "data":
                throw Self.identitySecretRefusal(name)
            case "synchronizable":
                guard case .bool(let flag) = value else {
                    throw KeychainError.param("\"synchronizable\" must be true or false when adding")
                }
                item.attributes[.synchronizable] = .bool(flag)
            default:
                let attribute = try ItemArguments.attribute(named: name, of: itemClass)
                if attribute.isReadOnly { throw KeychainError.param("\"\(name)\" is read-only") }
                item.attributes[attribute] = try attribute.value(json: value)
            }
        }
        if itemClass == .identity {
            guard item.secret != nil else { throw KeychainError.param("an identity needs \"certificate\"") }
            guard item.privateKey != nil else { throw KeychainError.param("an identity needs \"privateKey\"") }
        }
    }

    /// errSecParam for `value` or `data` given for an identity (the client refuses it too).
    public static func identitySecretRefusal(_ name: String) -> KeychainError {
        KeychainError.param("an identity takes \"certificate\" and \"privateKey\", not \"\(name)\"")
    }

    /// The body that decodes to this request (the client's side): attributes in catalogue order,
    /// the secret as base64 `data` (an identity's as `certificate` and `privateKey`), `return`.
    public func encoded() -> [UInt8] {
        JSONWriter.object { body in
            body.attributes(item.attributes)
            if item.itemClass == .identity {
                if let certificate = item.secret { body.key("certificate"); certificate.withUnsafeBytes { body.base64($0) } }
                if let privateKey = item.privateKey { body.key("privateKey"); privateKey.withUnsafeBytes { body.base64($0) } }
            } else if let secret = item.secret {
                body.key("data")
                secret.withUnsafeBytes { body.base64($0) }
            }
            body.member("return", ItemArguments.returnText(returnKinds))
        }
    }
}
