/// kSecClass: the five item classes, named as in paths and JSON.
public enum ItemClass: String, CaseIterable, Sendable, Hashable, Comparable {
    case genericPassword
    case internetPassword
    case certificate
    case key
    case identity

    /// Apple's class code (`genp`, `inet`, ...).
    public var code: String {
        switch self {
        case .genericPassword: "genp"
        case .internetPassword: "inet"
        case .certificate: "cert"
        case .key: "keys"
        case .identity: "idnt"
        }
    }

    /// The classes that are stored as rows; an identity is a certificate joined with its private key.
    public static let storedClasses: [ItemClass] = [.genericPassword, .internetPassword, .certificate, .key]

    public var isStored: Bool { self != .identity }

    /// The class for a path segment, or errSecNoSuchClass.
    public static func named(_ name: String) throws -> ItemClass {
        guard let itemClass = ItemClass(rawValue: name) else {
            throw KeychainError.noSuchClass("unknown item class \"\(name)\"")
        }
        return itemClass
    }

    public static func < (lhs: ItemClass, rhs: ItemClass) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
