import Foundation
import KeychainAPI
import KeychainCore

// Apple's four SecItem functions and SecCopyErrorMessageString, over keychaind, with the same
// signatures (dictionaries keyed by the kSec* constants of SecItemConstants.swift) and result
// shapes (keychain-semantics.md §4): a single `Data`, a `[String: Any]` keyed by Apple's codes
// (dates as `Date`, numbers as `Int`, data as `Data`, `v_Data` for the secret), or arrays of them.
//
// They are synchronous, like Apple's, and go through `KeychainClient.shared`; each blocks the
// calling thread until keychaind answers (see `KeychainClient.sendSynchronously`). Any failure,
// server-side or local (a key of the wrong type), is returned as its OSStatus; no client
// configured is errSecNotAvailable.

/// SecItemAdd: `POST /v1/items/{class}`.
@discardableResult
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecItemBridge.run(result) { client in
        let query = try SecQuery(attributes, operation: .add)
        var body = query.attributeMembers()
        if let data = query.valueData { body.append(("data", .string(Base64.encode(data)))) }
        body.append(("return", .string(query.serverReturn(forAdd: true))))
        let answer = try client.sendSynchronously(
            "POST", "/items/\(query.itemClass.rawValue)", body: .object(body))
        return answer["item"].map { query.shape($0) } ?? nil
    }
}

/// SecItemCopyMatching: `GET /v1/items/{class}` (or `/{persistentRef}`), following pages.
@discardableResult
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecItemBridge.run(result) { client in
        let query = try SecQuery(query, operation: .copyMatching)
        var parameters = query.queryParameters(includeLimit: false)
        parameters.append(("return", query.serverReturn(forAdd: false)))
        if !query.isSingle { parameters.append(("limit", query.limitText)) }
        let path = query.path
        var answer = try client.sendSynchronously("GET", path, query: parameters)
        if query.isSingle || query.persistentRef != nil {
            guard query.wantsResult, let item = answer["item"] else { return nil }
            return query.shape(item)
        }
        guard query.wantsResult else { return [Any]() as AnyObject }
        var all: [AnyObject] = []
        while true {
            if case .array(let items)? = answer["items"] { all += items.compactMap { query.shape($0) } }
            guard let next = answer["next"]?.stringValue else { break }
            answer = try client.sendSynchronously("GET", path, query: parameters + [("cursor", next)])
        }
        return all as AnyObject
    }
}

/// SecItemUpdate: `PATCH /v1/items/{class}?query` with the attributes to update as the body.
@discardableResult
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    SecItemBridge.run(nil) { client in
        let query = try SecQuery(query, operation: .update)
        let changes = try SecQuery(attributesToUpdate, operation: .attributesToUpdate, itemClass: query.itemClass)
        var body = changes.attributeMembers()
        if let data = changes.valueData { body.append(("data", .string(Base64.encode(data)))) }
        var parameters = query.queryParameters(includeLimit: true)
        if query.asksReturn { parameters.append(("return", query.serverReturn(forAdd: false))) }
        _ = try client.sendSynchronously("PATCH", query.path, query: parameters, body: .object(body))
        return nil
    }
}

/// SecItemDelete: `DELETE /v1/items/{class}?query` (every match). A query naming only the class
/// is refused by keychaind (errSecParam), unlike Apple's, as a guard against wiping a class.
@discardableResult
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    SecItemBridge.run(nil) { client in
        let query = try SecQuery(query, operation: .delete)
        _ = try client.sendSynchronously("DELETE", query.path, query: query.queryParameters(includeLimit: true))
        return nil
    }
}

/// SecCopyErrorMessageString: Apple's message for a status (`OSStatus <n>` for unknown codes).
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> String? {
    KeychainError.message(forStatus: status)
}

enum SecItemBridge {
    /// Runs one call with the shared client; stores its result object (if the caller asked for
    /// one) and maps every error to its OSStatus.
    static func run(
        _ result: UnsafeMutablePointer<CFTypeRef?>?, _ body: (KeychainClient) throws -> AnyObject?
    ) -> OSStatus {
        result?.pointee = nil
        do {
            let client = try KeychainClient.requireShared()
            let object = try body(client)
            result?.pointee = object
            return errSecSuccess
        } catch let error as KeychainError {
            KeychainClient.lastSecItemError = error
            return error.status
        } catch {
            KeychainClient.lastSecItemError = KeychainError.param()
            return errSecParam
        }
    }
}

extension KeychainClient {
    private static let lastErrorKey = "KeychainClient.lastSecItemError"

    /// The full error (status, name, message, detail) behind the last failed `SecItem*` call on
    /// the current thread, as `errno` is kept: the functions themselves can only return the
    /// OSStatus. Not reset by successful calls.
    public internal(set) static var lastSecItemError: KeychainError? {
        get { Thread.current.threadDictionary[lastErrorKey] as? KeychainError }
        set { Thread.current.threadDictionary[lastErrorKey] = newValue }
    }
}

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
            guard let classValue = entries.first(where: { $0.0 == kSecClass })?.1 else {
                throw KeychainError.param("kSecClass is missing")
            }
            guard let code = classValue as? String else { throw KeychainError.param("kSecClass must be a class constant") }
            guard let found = ItemClass.allCases.first(where: { $0.code == code || $0.rawValue == code }) else {
                throw KeychainError.noSuchClass("unknown item class \"\(code)\"")
            }
            itemClass = found
        }
        for (key, value) in entries {
            if operation == .attributesToUpdate {
                switch key {
                case kSecValueData: valueData = try Self.bytes(value, key)
                case kSecAttrSynchronizable: attributes.append((.synchronizable, .bool(try Self.bool(value, key))))
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
                throw KeychainError(.unimplemented, "kSecValueRef has no meaning over HTTP; use kSecValueData")
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
    }

    // MARK: Requests

    var path: String {
        if let persistentRef {
            return "/items/\(itemClass.rawValue)/\(KeychainClient.pathSegment(persistentRef))"
        }
        return "/items/\(itemClass.rawValue)"
    }

    /// Attributes for a JSON body (add, update).
    func attributeMembers() -> [(String, JSONValue)] {
        var members = attributes.map { ($0.0.name, Self.json($0.1.wireValue)) }
        if let synchronizable { members.append(("synchronizable", .bool(synchronizable == "true"))) }
        return members
    }

    /// Attributes and control keys for a query string (copy, update, delete). A limit is sent
    /// to update and delete too, so that keychaind refuses it there as securityd does.
    func queryParameters(includeLimit: Bool) -> [(String, String)] {
        var parameters = attributes.map { ($0.0.name, Self.text($0.1.wireValue)) }
        if let synchronizable { parameters.append(("synchronizable", synchronizable)) }
        if let caseInsensitive { parameters.append(("caseInsensitive", caseInsensitive ? "true" : "false")) }
        if includeLimit, let limit { parameters.append(("limit", Self.limitText(limit))) }
        return parameters
    }

    /// Whether any kSecReturn* key was set to true.
    var asksReturn: Bool { returnData || returnAttributes || returnRef || returnPersistentRef }

    var isSingle: Bool { (limit ?? .one).isSingle }
    var limitText: String { Self.limitText(limit ?? .one) }

    static func limitText(_ limit: MatchLimit) -> String {
        switch limit {
        case .one: "one"
        case .all: "all"
        case .count(let n): String(n)
        }
    }

    /// Password classes have no ref (success, no object); for keys and certificates the ref is
    /// answered as the item's bytes.
    private var refIsData: Bool { returnRef && itemClass != .genericPassword && itemClass != .internetPassword }

    /// What anything at all is to be returned.
    var wantsResult: Bool { returnData || returnAttributes || returnPersistentRef || refIsData }

    /// The server's `return` list for what was asked.
    func serverReturn(forAdd: Bool) -> String {
        var kinds: [String] = []
        if returnAttributes { kinds.append("attributes") }
        if returnData || refIsData { kinds.append("data") }
        if returnPersistentRef, !returnAttributes { kinds.append("ref") }
        return kinds.isEmpty ? "none" : kinds.joined(separator: ",")
    }

    // MARK: Results

    /// One answered item in Apple's shape (§4), or nil when nothing is to be returned for it.
    func shape(_ item: JSONValue) -> AnyObject? {
        let secret = item["data"]?.stringValue.flatMap(Base64.decode).map { Data($0) } ?? Data()
        let reference = item["persistentRef"]?.stringValue.map { Data($0.utf8) }
        var asked = 0
        for flag in [returnData, returnAttributes, returnPersistentRef, refIsData] where flag { asked += 1 }
        if asked == 0 { return nil }
        if asked == 1 {
            if returnData || refIsData { return secret as AnyObject }
            if returnPersistentRef { return (reference ?? Data()) as AnyObject }
        }
        var dictionary: [String: Any] = [:]
        if returnAttributes {
            if case .object(let members) = item {
                for (name, value) in members {
                    guard let attribute = Attribute.named(name), attribute.belongs(to: itemClass) else { continue }
                    if let converted = Self.appleValue(value, for: attribute) { dictionary[attribute.code] = converted }
                }
            }
        }
        if returnData { dictionary[kSecValueData] = secret }
        if refIsData { dictionary[kSecValueRef] = secret }
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
    static func appleValue(_ value: JSONValue, for attribute: Attribute) -> Any? {
        switch (attribute.valueType, value) {
        case (.string, .string(let text)): return text
        case (.data, .string(let text)): return Base64.decode(text).map { Data($0) }
        case (.integer, .integer(let number)): return Int(number)
        case (.bool, .bool(let flag)): return flag
        case (.date, .string(let text)): return RFC3339.parse(text)
        case (.enumeration(let enumeration), .string(let name)):
            guard let code = enumeration.values.first(where: { $0.name == name })?.code else { return name }
            if enumeration == .certificateType || enumeration == .certificateEncoding { return Int(code) }
            return code
        default: return nil
        }
    }

    static func json(_ wire: WireValue) -> JSONValue {
        switch wire {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .integer(let number): .integer(number)
        case .number(let number): .number(number)
        case .string(let text), .text(let text): .string(text)
        case .array(let values): .array(values.map(json))
        case .object(let fields): .object(fields.map { ($0.name, json($0.value)) })
        }
    }

    static func text(_ wire: WireValue) -> String {
        switch wire {
        case .bool(let flag): flag ? "true" : "false"
        case .integer(let number): String(number)
        case .number(let number): String(number)
        case .string(let text), .text(let text): text
        default: ""
        }
    }
}
