import Synchronization

/// One keychain attribute (`kSecAttr…`): its JSON name, Apple's four-character code, its value
/// type, the stored classes it belongs to, and whether it is part of the primary key or kept by
/// the server. The catalogue is `Attribute.all`; docs/keychain-semantics.md §1 lists it.
public struct Attribute: Hashable, @unchecked Sendable, CustomStringConvertible {
    public enum ValueType: Hashable, Sendable {
        case string, data, integer, bool, date
        case enumeration(Enumeration)
    }

    /// The catalogue entry. Attributes are copied all along every request's path, by all of
    /// libmicrohttpd's threads at once; with strong references each copy counted references to
    /// the shared entry (its set of classes, its enumeration), and those counters bounced between
    /// the cores (perf: retain/release were the largest user-space cost of a token fetch).
    ///
    /// Why `unowned(unsafe)` stays, and why it is safe: only the catalogue below makes entries,
    /// and `Definition.catalogue` keeps every one for the life of the process, so no handle can
    /// outlive its entry; copies then count nothing. The safe forms cost on the hot path: a strong
    /// or `unowned` (checked) reference counts on every copy, and a small index into a table of
    /// entries reads a lazily initialised global on every property read (`valueType` runs for
    /// every column of every row a find decodes). @unchecked Sendable: entries are immutable.
    private unowned(unsafe) let definition: Definition

    /// The JSON name (`account`, `service`, ...), also the attribute's name in storage.
    public var name: String { definition.name }
    /// Apple's code (`acct`, `svce`, ...).
    public var code: String { definition.code }
    public var valueType: ValueType { definition.valueType }
    /// The stored classes the attribute belongs to; an identity takes those of certificate and key.
    public var storedClasses: Set<ItemClass> { definition.storedClasses }
    /// Part of the class's uniqueness key (§2).
    public var isPrimaryKey: Bool { definition.isPrimaryKey }
    /// Set by the server (dates) or derived from a certificate's bytes; never given by a client.
    public var isReadOnly: Bool { definition.isReadOnly }

    public var description: String { name }

    /// Each catalogue entry exists once, so identity is equality.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(definition)) }
    public static func == (lhs: Attribute, rhs: Attribute) -> Bool { lhs.definition === rhs.definition }

    public func belongs(to itemClass: ItemClass) -> Bool {
        definition.classMask & Definition.mask(itemClass) != 0
    }

    /// Only the catalogue below makes attributes.
    private init(
        _ name: String, _ code: String, _ valueType: ValueType, _ classes: Set<ItemClass>,
        primaryKey: Bool = false, readOnly: Bool = false
    ) {
        definition = Definition.make(
            name: name, code: code, valueType: valueType, storedClasses: classes, isPrimaryKey: primaryKey,
            isReadOnly: readOnly)
    }

    private final class Definition: Sendable {
        let name: String
        let code: String
        let valueType: ValueType
        let storedClasses: Set<ItemClass>
        let isPrimaryKey: Bool
        let isReadOnly: Bool
        /// `storedClasses` as bits (`mask(_:)`), for `belongs(to:)`: it runs for every attribute a
        /// request names, and a set lookup hashes.
        let classMask: UInt8

        /// The bit of a stored class; an identity's is those of certificate and key.
        static func mask(_ itemClass: ItemClass) -> UInt8 {
            switch itemClass {
            case .genericPassword: 1
            case .internetPassword: 2
            case .certificate: 4
            case .key: 8
            case .identity: 4 | 8
            }
        }

        private init(
            name: String, code: String, valueType: ValueType, storedClasses: Set<ItemClass>, isPrimaryKey: Bool,
            isReadOnly: Bool
        ) {
            self.name = name
            self.code = code
            self.valueType = valueType
            self.storedClasses = storedClasses
            self.isPrimaryKey = isPrimaryKey
            self.isReadOnly = isReadOnly
            classMask = storedClasses.reduce(0) { $0 | Self.mask($1) }
        }

        /// Every entry ever made, never released.
        private static let catalogue = Mutex<[Definition]>([])

        static func make(
            name: String, code: String, valueType: ValueType, storedClasses: Set<ItemClass>, isPrimaryKey: Bool,
            isReadOnly: Bool
        ) -> Definition {
            let definition = Definition(
                name: name, code: code, valueType: valueType, storedClasses: storedClasses,
                isPrimaryKey: isPrimaryKey, isReadOnly: isReadOnly)
            catalogue.withLock { $0.append(definition) }
            return definition
        }
    }
}

extension Attribute {
    private static let every: Set<ItemClass> = [.genericPassword, .internetPassword, .certificate, .key]
    private static let passwords: Set<ItemClass> = [.genericPassword, .internetPassword]

    // Common to every class.
    public static let accessible = Attribute("accessible", "pdmn", .enumeration(.accessible), every)
    public static let accessControl = Attribute("accessControl", "accc", .data, every)
    public static let accessGroup = Attribute("accessGroup", "agrp", .string, every, primaryKey: true)
    public static let synchronizable = Attribute("synchronizable", "sync", .bool, every, primaryKey: true)
    public static let creationDate = Attribute("creationDate", "cdat", .date, every, readOnly: true)
    public static let modificationDate = Attribute("modificationDate", "mdat", .date, every, readOnly: true)
    public static let label = Attribute("label", "labl", .string, every)
    public static let syncViewHint = Attribute("syncViewHint", "vwht", .string, every, primaryKey: true)
    public static let tokenID = Attribute("tokenID", "tkid", .string, every, primaryKey: true)

    // Passwords.
    public static let description_ = Attribute("description", "desc", .string, passwords)
    public static let comment = Attribute("comment", "icmt", .string, passwords)
    public static let creator = Attribute("creator", "crtr", .integer, passwords)
    public static let type = Attribute("type", "type", .integer, passwords)
    public static let isInvisible = Attribute("isInvisible", "invi", .bool, passwords)
    public static let isNegative = Attribute("isNegative", "nega", .bool, passwords)
    public static let account = Attribute("account", "acct", .string, passwords, primaryKey: true)

    // Generic passwords.
    public static let service = Attribute("service", "svce", .string, [.genericPassword], primaryKey: true)
    public static let generic = Attribute("generic", "gena", .data, [.genericPassword])

    // Internet passwords.
    public static let securityDomain = Attribute(
        "securityDomain", "sdmn", .string, [.internetPassword], primaryKey: true)
    public static let server = Attribute("server", "srvr", .string, [.internetPassword], primaryKey: true)
    public static let `protocol` = Attribute(
        "protocol", "ptcl", .enumeration(.protocol), [.internetPassword], primaryKey: true)
    public static let authenticationType = Attribute(
        "authenticationType", "atyp", .enumeration(.authenticationType), [.internetPassword], primaryKey: true)
    public static let port = Attribute("port", "port", .integer, [.internetPassword], primaryKey: true)
    public static let path = Attribute("path", "path", .string, [.internetPassword], primaryKey: true)

    // Certificates: all derived from the certificate's bytes.
    public static let certificateType = Attribute(
        "certificateType", "ctyp", .enumeration(.certificateType), [.certificate], primaryKey: true,
        readOnly: true)
    public static let certificateEncoding = Attribute(
        "certificateEncoding", "cenc", .enumeration(.certificateEncoding), [.certificate], readOnly: true)
    public static let subject = Attribute("subject", "subj", .data, [.certificate], readOnly: true)
    public static let issuer = Attribute("issuer", "issr", .data, [.certificate], primaryKey: true, readOnly: true)
    public static let serialNumber = Attribute(
        "serialNumber", "slnr", .data, [.certificate], primaryKey: true, readOnly: true)
    public static let subjectKeyID = Attribute("subjectKeyID", "skid", .data, [.certificate], readOnly: true)
    public static let publicKeyHash = Attribute("publicKeyHash", "pkhh", .data, [.certificate], readOnly: true)

    // Keys.
    public static let keyClass = Attribute("keyClass", "kcls", .enumeration(.keyClass), [.key], primaryKey: true)
    public static let applicationLabel = Attribute("applicationLabel", "klbl", .data, [.key], primaryKey: true)
    public static let applicationTag = Attribute("applicationTag", "atag", .data, [.key], primaryKey: true)
    public static let keyType = Attribute("keyType", "type", .enumeration(.keyType), [.key], primaryKey: true)
    public static let keySizeInBits = Attribute("keySizeInBits", "bsiz", .integer, [.key], primaryKey: true)
    public static let effectiveKeySize = Attribute("effectiveKeySize", "esiz", .integer, [.key], primaryKey: true)
    public static let isPermanent = Attribute("isPermanent", "perm", .bool, [.key])
    public static let canEncrypt = Attribute("canEncrypt", "encr", .bool, [.key])
    public static let canDecrypt = Attribute("canDecrypt", "decr", .bool, [.key])
    public static let canDerive = Attribute("canDerive", "drve", .bool, [.key])
    public static let canSign = Attribute("canSign", "sign", .bool, [.key])
    public static let canVerify = Attribute("canVerify", "vrfy", .bool, [.key])
    public static let canWrap = Attribute("canWrap", "wrap", .bool, [.key])
    public static let canUnwrap = Attribute("canUnwrap", "unwp", .bool, [.key])
    public static let isSensitive = Attribute("isSensitive", "sens", .bool, [.key])
    public static let isExtractable = Attribute("isExtractable", "extr", .bool, [.key])

    /// Every attribute, in the order of docs/keychain-semantics.md §1 (also the storage column order).
    public static let all: [Attribute] = [
        accessible, accessControl, accessGroup, synchronizable, creationDate, modificationDate, label,
        syncViewHint, tokenID,
        description_, comment, creator, type, isInvisible, isNegative, account,
        service, generic,
        securityDomain, server, `protocol`, authenticationType, port, path,
        certificateType, certificateEncoding, subject, issuer, serialNumber, subjectKeyID, publicKeyHash,
        keyClass, applicationLabel, applicationTag, keyType, keySizeInBits, effectiveKeySize, isPermanent,
        canEncrypt, canDecrypt, canDerive, canSign, canVerify, canWrap, canUnwrap, isSensitive, isExtractable,
    ]

    private static let byName: [String: Attribute] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// The attribute with this JSON name, whatever its class.
    public static func named(_ name: String) -> Attribute? { byName[name] }

    /// The attributes of a class, in catalogue order.
    public static func attributes(of itemClass: ItemClass) -> [Attribute] {
        all.filter { $0.belongs(to: itemClass) }
    }

    /// The primary key of a stored class (§2), in catalogue order.
    public static func primaryKey(of itemClass: ItemClass) -> [Attribute] {
        let storedClass = itemClass == .identity ? .certificate : itemClass
        return all.filter { $0.isPrimaryKey && $0.storedClasses.contains(storedClass) }
    }
}
