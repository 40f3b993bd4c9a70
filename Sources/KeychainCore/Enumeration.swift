/// The values an enumerated attribute may take, by JSON name (`keychain-semantics.md` §3).
/// Aliases (`ec`, `ecdsa` for `ecsecPrimeRandom`) are accepted on input and answered canonically.
public struct Enumeration: Hashable, Sendable {
    public let name: String
    /// Canonical JSON names with Apple's code for each.
    public let values: [(name: String, code: String)]
    public let aliases: [String: String]

    public static func == (lhs: Enumeration, rhs: Enumeration) -> Bool { lhs.name == rhs.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    /// The canonical JSON name for `name`, or nil if it is not a value of this enumeration.
    public func canonical(_ name: String) -> String? {
        if values.contains(where: { $0.name == name }) { return name }
        return aliases[name]
    }

    /// An absent enumerated primary-key attribute: the empty name, which no value has (Apple stores 0).
    public var primaryKeyDefault: String { "" }

    public var names: [String] { values.map(\.name) }
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
