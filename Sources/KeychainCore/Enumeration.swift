import Synchronization

/// The values an enumerated attribute may take, by JSON name (docs/keychain-semantics.md §3).
/// Aliases (`ec`, `ecdsa` for `ecsecPrimeRandom`) are accepted on input and answered canonically.
///
/// Like `Attribute`, a handle on a catalogue entry that lives as long as the process, held
/// `unowned(unsafe)`: an attribute's `valueType` is copied for every column of every row a find
/// decodes, on all request threads at once, and with strong references each copy counted
/// references to the shared arrays, whose counters bounced between the cores (perf: 0.7 % of a
/// 1M-item read's samples). Safe for the reason `Attribute`'s handle is (see there): only the
/// catalogue makes entries and `Definition.catalogue` never releases one.
/// @unchecked Sendable: entries are immutable.
public struct Enumeration: Hashable, @unchecked Sendable {
    private unowned(unsafe) let definition: Definition

    public var name: String { definition.name }
    /// Canonical JSON names with Apple's code for each.
    public var values: [(name: String, code: String)] { definition.values }
    public var aliases: [String: String] { definition.aliases }

    /// Each catalogue entry exists once, so identity is equality.
    public static func == (lhs: Enumeration, rhs: Enumeration) -> Bool { lhs.definition === rhs.definition }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(definition)) }

    /// The canonical JSON name for `name`, or nil if it is not a value of this enumeration.
    public func canonical(_ name: String) -> String? {
        if definition.values.contains(where: { $0.name == name }) { return name }
        return definition.aliases[name]
    }

    /// An absent enumerated primary-key attribute: the empty name, which no value has (Apple stores 0).
    public var primaryKeyDefault: String { "" }

    public var names: [String] { definition.values.map(\.name) }

    /// Only the catalogue below makes enumerations.
    private init(name: String, values: [(name: String, code: String)], aliases: [String: String]) {
        let definition = Definition(name: name, values: values, aliases: aliases)
        Definition.catalogue.withLock { $0.append(definition) }
        self.definition = definition
    }

    private final class Definition: Sendable {
        let name: String
        let values: [(name: String, code: String)]
        let aliases: [String: String]

        init(name: String, values: [(name: String, code: String)], aliases: [String: String]) {
            self.name = name
            self.values = values
            self.aliases = aliases
        }

        /// Every entry ever made, never released.
        static let catalogue = Mutex<[Definition]>([])
    }
}

extension Enumeration {
    public static let accessible = Enumeration(
        name: "accessible",
        values: [
            ("whenUnlocked", "ak"), ("afterFirstUnlock", "ck"), ("always", "dk"),
            ("whenPasscodeSetThisDeviceOnly", "akpu"), ("whenUnlockedThisDeviceOnly", "aku"),
            ("afterFirstUnlockThisDeviceOnly", "cku"), ("alwaysThisDeviceOnly", "dku"),
        ],
        aliases: [:])

    public static let `protocol` = Enumeration(
        name: "protocol",
        values: [
            ("ftp", "ftp "), ("ftpAccount", "ftpa"), ("http", "http"), ("irc", "irc "), ("nntp", "nntp"),
            ("pop3", "pop3"), ("smtp", "smtp"), ("socks", "sox "), ("imap", "imap"), ("ldap", "ldap"),
            ("appleTalk", "atlk"), ("afp", "afp "), ("telnet", "teln"), ("ssh", "ssh "), ("ftps", "ftps"),
            ("https", "htps"), ("httpProxy", "htpx"), ("httpsProxy", "htsx"), ("ftpProxy", "ftpx"),
            ("smb", "smb "), ("rtsp", "rtsp"), ("rtspProxy", "rtsx"), ("daap", "daap"), ("eppc", "eppc"),
            ("ipp", "ipp "), ("nntps", "ntps"), ("ldaps", "ldps"), ("telnetS", "tels"), ("imaps", "imps"),
            ("ircs", "ircs"), ("pop3s", "pops"),
        ],
        aliases: [:])

    public static let authenticationType = Enumeration(
        name: "authenticationType",
        values: [
            ("ntlm", "ntlm"), ("msn", "msna"), ("dpa", "dpaa"), ("rpa", "rpaa"), ("httpBasic", "http"),
            ("httpDigest", "httd"), ("htmlForm", "form"), ("default", "dflt"),
        ],
        aliases: [:])

    public static let keyClass = Enumeration(
        name: "keyClass",
        values: [("public", "0"), ("private", "1"), ("symmetric", "2")],
        aliases: [:])

    public static let keyType = Enumeration(
        name: "keyType",
        values: [
            ("rsa", "42"), ("ecsecPrimeRandom", "73"), ("dsa", "43"), ("des", "14"), ("3des", "17"),
            ("rc2", "23"), ("rc4", "25"), ("cast", "56"), ("aes", "2147483649"), ("ed25519", "105"),
            ("x25519", "106"), ("ed448", "107"), ("x448", "108"),
        ],
        aliases: ["ec": "ecsecPrimeRandom", "ecdsa": "ecsecPrimeRandom"])

    /// No Apple constants: the X.509 version (CSSM_CERT_X_509v1..v3 = 1...3).
    public static let certificateType = Enumeration(
        name: "certificateType",
        values: [("x509v1", "1"), ("x509v2", "2"), ("x509v3", "3")],
        aliases: [:])

    /// No Apple constants: 3 = DER, the only encoding on iOS.
    public static let certificateEncoding = Enumeration(
        name: "certificateEncoding", values: [("der", "3")], aliases: [:])
}
