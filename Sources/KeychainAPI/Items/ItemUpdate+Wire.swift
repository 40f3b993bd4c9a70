public import KeychainCore

extension ItemUpdate {
    /// Decodes the body of an update (`PATCH /items/{class}`, SecItemUpdate's
    /// attributesToUpdate): attributes of the class and `value`/`data`. Any other name is
    /// errSecNoSuchAttr, a read-only attribute errSecParam.
    public init(decoding body: JSONBody, of itemClass: ItemClass) throws {
        self.init()
        try ItemArguments.rejectDuplicates(body.members) { $0.0 }
        var sawSecret = false
        for (name, value) in body.members {
            switch name {
            case "value", "data":
                if sawSecret { throw KeychainError.param("give \"value\" or \"data\", not both") }
                sawSecret = true
                secret = try ItemArguments.secret(name, value)
            case "persistentRef":
                throw KeychainError.param("\"persistentRef\" is read-only")
            case "synchronizable":
                guard case .bool(let flag) = value else {
                    throw KeychainError.param("\"synchronizable\" must be true or false in an update")
                }
                attributes[.synchronizable] = .bool(flag)
            default:
                let attribute = try ItemArguments.attribute(named: name, of: itemClass)
                if attribute.isReadOnly { throw KeychainError.param("\"\(name)\" is read-only") }
                attributes[attribute] = try attribute.value(json: value)
            }
        }
    }

    /// The body that decodes to this update (the client's side): attributes in catalogue
    /// order, the secret as base64 `data`.
    public func encoded() -> [UInt8] {
        JSONWriter.object { body in
            body.attributes(attributes)
            if let secret {
                body.key("data")
                secret.withUnsafeBytes { body.base64($0) }
            }
        }
    }
}
