import Foundation
import KeychainCore

// The SecureStore wrapper of seed 000 (the Keychain Services tutorial), over keychaind: the same
// types and method names, implemented with the same SecItem calls (upsert = CopyMatching, then
// Update or Add). It uses `KeychainClient.shared`.

/// Something that gives the base query of a SecureStore.
public protocol SecureStoreQueryable {
    var query: [String: Any] { get }
}

/// Generic passwords of one service (and optionally one access group).
public struct GenericPasswordQueryable: Sendable {
    public let service: String
    public let accessGroup: String?

    public init(service: String, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }
}

extension GenericPasswordQueryable: SecureStoreQueryable {
    public var query: [String: Any] {
        var query: [String: Any] = [:]
        query[String(kSecClass)] = kSecClassGenericPassword
        query[String(kSecAttrService)] = service
        if let accessGroup {
            query[String(kSecAttrAccessGroup)] = accessGroup
        }
        return query
    }
}

/// kSecAttrProtocol values, raw values being Apple's constants.
public enum InternetProtocol: String, Sendable, CaseIterable {
    case ftp = "ftp ", ftpAccount = "ftpa", http = "http", irc = "irc ", nntp = "nntp", pop3 = "pop3"
    case smtp = "smtp", socks = "sox ", imap = "imap", ldap = "ldap", appleTalk = "atlk", afp = "afp "
    case telnet = "teln", ssh = "ssh ", ftps = "ftps", https = "htps", httpProxy = "htpx"
    case httpsProxy = "htsx", ftpProxy = "ftpx", smb = "smb ", rtsp = "rtsp", rtspProxy = "rtsx"
    case daap = "daap", eppc = "eppc", ipp = "ipp ", nntps = "ntps", ldaps = "ldps", telnetS = "tels"
    case imaps = "imps", ircs = "ircs", pop3S = "pops"
}

/// kSecAttrAuthenticationType values, raw values being Apple's constants.
public enum InternetAuthenticationType: String, Sendable, CaseIterable {
    case ntlm = "ntlm", msn = "msna", dpa = "dpaa", rpa = "rpaa", httpBasic = "http"
    case httpDigest = "httd", htmlForm = "form", `default` = "dflt"
}

/// Internet passwords of one server/port/path/security domain/protocol/authentication type.
public struct InternetPasswordQueryable: Sendable {
    public let server: String
    public let port: Int
    public let path: String
    public let securityDomain: String
    public let internetProtocol: InternetProtocol
    public let internetAuthenticationType: InternetAuthenticationType

    public init(
        server: String, port: Int, path: String, securityDomain: String, internetProtocol: InternetProtocol,
        internetAuthenticationType: InternetAuthenticationType
    ) {
        self.server = server
        self.port = port
        self.path = path
        self.securityDomain = securityDomain
        self.internetProtocol = internetProtocol
        self.internetAuthenticationType = internetAuthenticationType
    }
}

extension InternetPasswordQueryable: SecureStoreQueryable {
    public var query: [String: Any] {
        var query: [String: Any] = [:]
        query[String(kSecClass)] = kSecClassInternetPassword
        query[String(kSecAttrPort)] = port
        query[String(kSecAttrServer)] = server
        query[String(kSecAttrSecurityDomain)] = securityDomain
        query[String(kSecAttrPath)] = path
        query[String(kSecAttrProtocol)] = internetProtocol.rawValue
        query[String(kSecAttrAuthenticationType)] = internetAuthenticationType.rawValue
        return query
    }
}

/// The wrapper's own errors; keychain failures are thrown as `KeychainError` (status, name,
/// message and the server's detail).
public enum SecureStoreError: Error, Equatable, Sendable {
    case string2DataConversionError
    case data2StringConversionError
}

/// Stores string values by account under a queryable's base query.
public struct SecureStore {
    let secureStoreQueryable: any SecureStoreQueryable

    public init(secureStoreQueryable: any SecureStoreQueryable) {
        self.secureStoreQueryable = secureStoreQueryable
    }

    /// Adds or replaces the value of an account.
    public func setValue(_ value: String, for userAccount: String) throws {
        guard let encodedPassword = value.data(using: .utf8) else {
            throw SecureStoreError.string2DataConversionError
        }
        var query = secureStoreQueryable.query
        query[String(kSecAttrAccount)] = userAccount

        var status = SecItemCopyMatching(query as CFDictionary, nil)
        switch status {
        case errSecSuccess:
            var attributesToUpdate: [String: Any] = [:]
            attributesToUpdate[String(kSecValueData)] = encodedPassword
            status = SecItemUpdate(query as CFDictionary, attributesToUpdate as CFDictionary)
            if status != errSecSuccess { throw error(from: status) }
        case errSecItemNotFound:
            query[String(kSecValueData)] = encodedPassword
            status = SecItemAdd(query as CFDictionary, nil)
            if status != errSecSuccess { throw error(from: status) }
        default:
            throw error(from: status)
        }
    }

    /// The value of an account, nil when there is none.
    public func getValue(for userAccount: String) throws -> String? {
        var query = secureStoreQueryable.query
        query[String(kSecMatchLimit)] = kSecMatchLimitOne
        query[String(kSecReturnAttributes)] = kCFBooleanTrue
        query[String(kSecReturnData)] = kCFBooleanTrue
        query[String(kSecAttrAccount)] = userAccount

        var queryResult: AnyObject?
        let status = withUnsafeMutablePointer(to: &queryResult) {
            SecItemCopyMatching(query as CFDictionary, $0)
        }
        switch status {
        case errSecSuccess:
            guard let queriedItem = queryResult as? [String: Any],
                let passwordData = queriedItem[String(kSecValueData)] as? Data,
                let password = String(data: passwordData, encoding: .utf8)
            else {
                throw SecureStoreError.data2StringConversionError
            }
            return password
        case errSecItemNotFound:
            return nil
        default:
            throw error(from: status)
        }
    }

    /// Removes an account's value; nothing stored is not an error.
    public func removeValue(for userAccount: String) throws {
        var query = secureStoreQueryable.query
        query[String(kSecAttrAccount)] = userAccount
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw error(from: status) }
    }

    /// Removes every value under the base query.
    public func removeAllValues() throws {
        let query = secureStoreQueryable.query
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw error(from: status) }
    }

    /// The full error of the failed call (see `KeychainClient.lastSecItemError`).
    private func error(from status: OSStatus) -> KeychainError {
        if let last = KeychainClient.lastSecItemError, last.status == status { return last }
        return KeychainError(KeychainError.Code(rawValue: status) ?? .io, SecCopyErrorMessageString(status, nil))
    }
}
