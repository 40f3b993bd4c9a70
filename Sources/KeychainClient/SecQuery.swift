import Foundation
import KeychainAPI
import KeychainCore

/// A SecItem dictionary decoded into the attributes, control keys and secret keychaind takes.
struct SecQuery {
    enum Operation { case add, copyMatching, update, delete, attributesToUpdate }

    var itemClass: ItemClass
    var attributes: [(Attribute, AttributeValue)] = []
    /// `true`, `false` or `any`.
    var synchronizable: String?
    var returnData = false
    var returnAttributes = false
    var returnRef = false
    var returnPersistentRef = false
    var limit: MatchLimit?
    var caseInsensitive: Bool?
    var valueData: [UInt8]?
    /// kSecValueRef: a key to add, or the key whose item a search, update or delete means.
    var valueKey: SecKey?
    var persistentRef: String?

    init(_ dictionary: CFDictionary, operation: Operation, itemClass fixedClass: ItemClass? = nil) throws {
        var entries: [(String, Any)] = []
        for (key, value) in dictionary {
            guard let name = key as? String else { throw KeychainError.param("a dictionary key is not a string") }
            guard let value = SecQuery.unwrap(value) else { continue }
            entries.append((name, value))
        }
        if let fixedClass {
            itemClass = fixedClass
        } else {
            if let classValue = entries.first(where: { $0.0 == kSecClass })?.1 {
                guard let code = classValue as? String else { throw KeychainError.param("kSecClass must be a class constant") }
                guard let found = ItemClass.allCases.first(where: { $0.code == code || $0.rawValue == code }) else {
                    throw KeychainError.noSuchClass("unknown item class \"\(code)\"")
                }
                itemClass = found
            } else if entries.contains(where: { $0.0 == kSecValueRef && $0.1 is SecKey }) {
                // As Apple: a key ref implies its class.
                itemClass = .key
            } else {
                throw KeychainError.param("kSecClass is missing")
            }
        }
        for (key, value) in entries {
            if operation == .attributesToUpdate {
                switch key {
                case kSecValueData: valueData = try Self.bytes(value, key)
                case kSecAttrSynchronizable: attributes.append((.synchronizable, .bool(try Self.bool(value, key))))
                case kSecAttrAccessControl where value is SecAccessControl:
                    attributes.append((.accessible, try Self.accessibility(of: value)))
                default:
                    guard let attribute = Self.attribute(code: key, of: itemClass) else {
                        throw KeychainError.noSuchAttr("\"\(key)\" cannot be updated")
                    }
                    attributes.append((attribute, try Self.value(value, for: attribute)))
                }
                continue
            }
            switch key {
            case kSecClass: continue
            case kSecReturnData: returnData = try Self.bool(value, key)
            case kSecReturnAttributes: returnAttributes = try Self.bool(value, key)
            case kSecReturnRef: returnRef = try Self.bool(value, key)
            case kSecReturnPersistentRef: returnPersistentRef = try Self.bool(value, key)
            case kSecMatchLimit:
                if let text = value as? String {
                    switch text {
                    case kSecMatchLimitOne: limit = .one
                    case kSecMatchLimitAll: limit = .all
                    default: throw KeychainError.param("kSecMatchLimit must be one, all or a number")
                    }
                } else if let number = Self.integer(value) {
                    if number == -1 {
                        limit = .all
                    } else if number > 0 {
                        limit = number == 1 ? .one : .count(Int(number))
                    } else {
                        throw KeychainError.itemNotFound("kSecMatchLimit 0 matches nothing")
                    }
                } else {
                    throw KeychainError.param("kSecMatchLimit must be one, all or a number")
                }
            case kSecMatchCaseInsensitive: caseInsensitive = try Self.bool(value, key)
            case kSecValueData: valueData = try Self.bytes(value, key)
            case kSecValuePersistentRef, kSecAttrPersistentReference:
                if let text = value as? String {
                    persistentRef = text
                } else {
                    persistentRef = String(decoding: try Self.bytes(value, key), as: UTF8.self)
                }
            case kSecValueRef:
                guard let key = value as? SecKey else {
                    throw KeychainError(.unimplemented, "kSecValueRef takes a SecKey; give certificates as kSecValueData")
                }
                valueKey = key
            case kSecAttrAccessControl where value is SecAccessControl:
                attributes.append((.accessible, try Self.accessibility(of: value)))
            case kSecAttrTokenID where operation == .add:
                throw KeyParameters.tokenRefusal(value)
            case _ where Self.ignoredKeys.contains(key):
                continue
            case kSecAttrSynchronizable:
                if let text = value as? String, text == kSecAttrSynchronizableAny {
                    synchronizable = "any"
                } else {
                    synchronizable = try Self.bool(value, key) ? "true" : "false"
                }
            default:
                if key.hasPrefix("m_") || key.hasPrefix("r_") || key.hasPrefix("u_") || key.hasPrefix("v_") {
                    throw KeychainError.param("\"\(key)\" is not supported by keychaind")
                }
                guard let attribute = Self.attribute(code: key, of: itemClass) else {
                    if key.count == 4 {
                        throw KeychainError.noSuchAttr("\"\(key)\" is not an attribute of \(itemClass.rawValue)")
                    }
                    throw KeychainError.param("unknown key \"\(key)\"")
                }
                attributes.append((attribute, try Self.value(value, for: attribute)))
            }
        }
        if operation == .add, limit != nil || caseInsensitive != nil {
            throw KeychainError.param("kSecMatch keys are for searches")
        }
        if operation == .add, synchronizable == "any" {
            throw KeychainError.param("kSecAttrSynchronizableAny is for searches")
        }
        if let valueKey { try takeAttributes(of: valueKey, adding: operation == .add) }
    }

    // MARK: Requests

    var path: String {
        if let persistentRef {
            return "/items/\(itemClass.rawValue)/\(KeychainClient.pathSegment(persistentRef))"
        }
        return "/items/\(itemClass.rawValue)"
    }

    private var attributeValues: [Attribute: AttributeValue] {
        Dictionary(attributes, uniquingKeysWith: { $1 })
    }

    /// The add's body: the attributes, the secret as `data`, what to return.
    func addRequest() throws -> ItemAddRequest {
        // Refused before sending, with the error keychaind gives (an identity takes its
        // certificate and private key by other names).
        if itemClass == .identity, valueData != nil { throw ItemAddRequest.identitySecretRefusal("data") }
        var values = attributeValues
        if let synchronizable { values[.synchronizable] = .bool(synchronizable == "true") }
        return ItemAddRequest(
            item: NewItem(itemClass: itemClass, attributes: values, secret: valueData.map { SecretBytes($0) }),
            returnKinds: returnKinds)
    }

    /// Overwrites the secret's bytes (a password, a key's private material) once they are sent.
    mutating func wipeValueData() {
        if valueData != nil { SecretBytes.wipe(&valueData!) }
    }

    /// attributesToUpdate as the update's body.
    var update: ItemUpdate {
        ItemUpdate(attributes: attributeValues, secret: valueData.map { SecretBytes($0) })
    }

    /// The query for a search, update or delete. kSecMatch and kSecReturn keys that `operation`
    /// does not take are refused here, with the error keychaind gives for them.
    func itemQuery(for operation: ItemOperation) throws -> ItemQuery {
        if caseInsensitive != nil, let refusal = operation.refusal(of: .caseInsensitive) { throw refusal }
        if limit != nil, let refusal = operation.refusal(of: .limit) { throw refusal }
        if asksReturn, let refusal = operation.refusal(of: .return) { throw refusal }
        let filter: SynchronizableFilter =
            switch synchronizable {
            case "true": .synchronizable
            case "any": .any
            default: .nonSynchronizable
            }
        return ItemQuery(
            itemClass: itemClass, attributes: attributeValues, synchronizable: filter,
            namesSynchronizable: synchronizable != nil, limit: limit ?? .one, returnKinds: returnKinds,
            caseInsensitive: caseInsensitive ?? false)
    }

    /// Whether any kSecReturn* key was set to true.
    var asksReturn: Bool { returnData || returnAttributes || returnRef || returnPersistentRef }

    var isSingle: Bool { (limit ?? .one).isSingle }

    /// Password classes have no ref (success, no object); a key's ref is its `SecKey`, made from
    /// the item's data, type and class; for certificates and identities the ref is answered as the
    /// item's bytes.
    private var refIsData: Bool { returnRef && itemClass != .genericPassword && itemClass != .internetPassword }
    private var refIsKey: Bool { returnRef && itemClass == .key }

    /// What anything at all is to be returned.
    var wantsResult: Bool { returnData || returnAttributes || returnPersistentRef || refIsData }

    /// What the server is to return for what was asked (attributes carry the reference).
    var returnKinds: ReturnKinds {
        var kinds = ReturnKinds()
        if returnAttributes || refIsKey { kinds.insert(.attributes) }
        if returnData || refIsData { kinds.insert(.data) }
        if returnPersistentRef, !kinds.contains(.attributes) { kinds.insert(.ref) }
        return kinds
    }

    // MARK: Results

    /// One answered item in Apple's shape (§4), or nil when nothing is to be returned for it.
    func shape(_ item: AnsweredItem) throws -> AnyObject? {
        let secret = item.data.map { Data($0.copyBytes()) } ?? Data()
        let reference = item.persistentRef.map { Data($0.rawValue.utf8) }
        let ref: AnyObject = try refIsKey ? Self.key(of: item) : secret as AnyObject
        var asked = 0
        for flag in [returnData, returnAttributes, returnPersistentRef, refIsData] where flag { asked += 1 }
        if asked == 0 { return nil }
        if asked == 1 {
            if refIsData { return ref }
            if returnData { return secret as AnyObject }
            if returnPersistentRef { return (reference ?? Data()) as AnyObject }
        }
        var dictionary: [String: Any] = [:]
        if returnAttributes, let attributes = item.attributes {
            for (attribute, value) in attributes where attribute.belongs(to: itemClass) {
                if let converted = Self.appleValue(value, for: attribute) { dictionary[attribute.code] = converted }
            }
        }
        if returnData { dictionary[kSecValueData] = secret }
        if refIsData { dictionary[kSecValueRef] = ref }
        if returnPersistentRef, let reference { dictionary[kSecValuePersistentRef] = reference }
        return dictionary as AnyObject
    }

    // MARK: Values

    static func attribute(code: String, of itemClass: ItemClass) -> Attribute? {
        Attribute.all.first { $0.code == code && $0.belongs(to: itemClass) }
    }

    /// Optionals stored as `Any` (e.g. `kCFBooleanTrue` put into an `[String: Any]` literal).
    static func unwrap(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let child = mirror.children.first else { return nil }
        return unwrap(child.value)
    }

    static func bool(_ value: Any, _ key: String) throws -> Bool {
        if let flag = value as? Bool { return flag }
        if let number = value as? NSNumber { return number.boolValue }
        throw KeychainError.param("\"\(key)\" must be a boolean")
    }

    static func integer(_ value: Any) -> Int64? {
        switch value {
        case let number as Int: return Int64(number)
        case let number as Int64: return number
        case let number as Int32: return Int64(number)
        case let number as Int16: return Int64(number)
        case let number as UInt16: return Int64(number)
        case let number as UInt32: return Int64(number)
        case let number as UInt: return Int64(exactly: number)
        case let number as NSNumber: return number.int64Value
        default: return nil
        }
    }

    static func bytes(_ value: Any, _ key: String) throws -> [UInt8] {
        if let data = value as? Data { return [UInt8](data) }
        if let bytes = value as? [UInt8] { return bytes }
        throw KeychainError.param("\"\(key)\" must be Data")
    }

    /// A dictionary value typed for `attribute`.
    static func value(_ value: Any, for attribute: Attribute) throws -> AttributeValue {
        switch attribute.valueType {
        case .string:
            if let text = value as? String { return .string(text) }
        case .data:
            if let data = value as? Data { return .data([UInt8](data)) }
            if let bytes = value as? [UInt8] { return .data(bytes) }
        case .integer:
            if !(value is Bool), let number = integer(value) { return .integer(number) }
        case .bool:
            if let flag = value as? Bool { return .bool(flag) }
            if let number = value as? NSNumber { return .bool(number.boolValue) }
        case .date:
            if let date = value as? Date { return .date(date.truncatedToMilliseconds) }
        case .enumeration(let enumeration):
            var text = value as? String
            if text == nil, let number = integer(value) { text = String(number) }
            if let text {
                if let name = enumeration.values.first(where: { $0.code == text })?.name { return .string(name) }
                if let name = enumeration.canonical(text) { return .string(name) }
            }
        }
        throw KeychainError.param("the value of \"\(attribute.code)\" has the wrong type")
    }

    /// An answered attribute in Apple's type: `Date`, `Int`, `Bool`, `Data`, `String`, Apple's
    /// constant for enumerations (an `Int` where Apple has no constant).
    static func appleValue(_ value: AttributeValue, for attribute: Attribute) -> Any? {
        switch (attribute.valueType, value) {
        case (.enumeration(let enumeration), .string(let name)):
            guard let code = enumeration.values.first(where: { $0.name == name })?.code else { return name }
            if enumeration == .certificateType || enumeration == .certificateEncoding { return Int(code) }
            return code
        case (_, .string(let text)): return text
        case (_, .data(let bytes)): return Data(bytes)
        case (_, .integer(let number)): return Int(number)
        case (_, .bool(let flag)): return flag
        case (_, .date(let date)): return date
        }
    }
}
