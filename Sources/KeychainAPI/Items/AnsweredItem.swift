public import KeychainCore

/// One item as an answer carries it, shaped by the return kinds asked for (docs/api.md, "Items"):
/// attributes → every stored attribute in catalogue order, then `persistentRef`; ref →
/// `persistentRef`; data → `data` (base64) and `value` when the bytes are UTF-8. An identity
/// answers its certificate's attributes, `key` (the private key's attributes) and, for data,
/// `certificate` and `privateKey` (base64), the names its add takes.
public struct AnsweredItem: Sendable {
    public var attributes: [Attribute: AttributeValue]?
    public var persistentRef: PersistentRef?
    /// An identity's private key, with attributes.
    public var key: Key?
    public var data: SecretBytes?
    public var certificate: SecretBytes?
    public var privateKey: SecretBytes?

    public struct Key: Sendable {
        public var attributes: [Attribute: AttributeValue]
        public var persistentRef: PersistentRef?
    }

    public init(_ found: borrowing FoundItem, returning kinds: ReturnKinds) {
        if kinds.contains(.attributes) {
            attributes = found.item.attributes
        }
        if !kinds.isDisjoint(with: [.attributes, .ref]) {
            persistentRef = found.persistentRef
        }
        if let key = found.key, kinds.contains(.attributes) {
            self.key = Key(attributes: key.attributes, persistentRef: key.persistentRef)
        }
        guard kinds.contains(.data) else { return }
        if let key = found.key {
            certificate = found.item.secret ?? SecretBytes([UInt8]())
            privateKey = key.secret ?? SecretBytes([UInt8]())
        } else {
            data = found.item.secret ?? SecretBytes([UInt8]())
        }
    }

    /// Written without closures over `self` (which would copy the item, and count references to
    /// what it holds): an item read is a hot path.
    public func write(to writer: inout JSONWriter) {
        writer.openObject()
        if let attributes { writer.attributes(attributes) }
        if let persistentRef { writer.member("persistentRef", persistentRef.rawValue) }
        if let key {
            writer.key("key")
            writer.openObject()
            writer.attributes(key.attributes)
            if let ref = key.persistentRef { writer.member("persistentRef", ref.rawValue) }
            writer.closeObject()
        }
        Self.write("certificate", certificate, to: &writer)
        Self.write("privateKey", privateKey, to: &writer)
        Self.write("data", data, withText: true, to: &writer)
        writer.closeObject()
    }

    /// A secret as base64, and `withText`, as its text (`value`) too when it is UTF-8.
    private static func write(
        _ name: StaticString, _ secret: SecretBytes?, withText: Bool = false, to writer: inout JSONWriter
    ) {
        guard let secret else { return }
        writer.key(name)
        secret.withUnsafeBytes { raw in
            writer.base64(raw)
            let utf8 = raw.bindMemory(to: UInt8.self)
            if withText, String.isValidUTF8(utf8) {
                writer.key("value")
                writer.string(utf8: utf8)
            }
        }
    }

    /// About the bytes `write(to:)` takes, so that the answer is written without regrowing.
    var estimatedLength: Int {
        var length = 64
        if attributes != nil || key != nil { length += 1024 }
        for secret in [data, certificate, privateKey] { length += (secret?.count ?? 0) * 3 }
        return length
    }

    /// An answered item, as the client reads it: attributes it does not know, or whose value
    /// it cannot read, are left out.
    public init(decoding json: JSONValue) throws {
        guard case .object(let members) = json else { throw KeychainError.decode("an answered item is not an object") }
        for (name, value) in members {
            switch name {
            case "persistentRef": persistentRef = value.stringValue.flatMap(PersistentRef.init)
            case "value": continue  // the text of `data`
            case "data": data = try Self.secret(name, value)
            case "certificate": certificate = try Self.secret(name, value)
            case "privateKey": privateKey = try Self.secret(name, value)
            case "key":
                let key = try AnsweredItem(decoding: value)
                self.key = Key(attributes: key.attributes ?? [:], persistentRef: key.persistentRef)
            default:
                guard let attribute = Attribute.named(name), let typed = try? attribute.value(json: value) else { continue }
                attributes = attributes ?? [:]
                attributes?[attribute] = typed
            }
        }
    }

    private static func secret(_ name: String, _ value: JSONValue) throws -> SecretBytes {
        do {
            return try ItemArguments.secretBytes(name, value)
        } catch {
            throw KeychainError.decode("the answer's \"\(name)\" is not base64")
        }
    }
}
