public import Foundation

/// A caller of keychaind: a name, the keychain access groups its items live in (the first is the
/// default on add), and a role. Admin clients also reach `/v1/admin/*`.
public struct Client: Sendable, Equatable {
    public enum Role: String, Sendable, CaseIterable {
        case client
        case admin
    }

    public let name: String
    public let accessGroups: [String]
    public let role: Role
    public let createdAt: Date

    public init(name: String, accessGroups: [String], role: Role, createdAt: Date) {
        self.name = name
        self.accessGroups = accessGroups
        self.role = role
        self.createdAt = createdAt
    }

    /// A client's name: 1-128 ASCII letters, digits, `.`, `_` and `-` (it appears in paths,
    /// logs and the audit log as it is).
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 128
            && name.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0))
            }
    }

    /// An access group: non-empty and in Unicode NFC. Groups compare by their bytes, so two
    /// spellings of one name would be two groups that look the same in every list and log;
    /// only the NFC spelling is accepted (docs/api.md, "Rules that hold for every route").
    public static func isValidAccessGroup(_ group: String) -> Bool {
        !group.isEmpty && isNFC(group)
    }

    /// Whether `text` is in Unicode Normalization Form C (ASCII always is).
    public static func isNFC(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 < 0x80 } || text.precomposedStringWithCanonicalMapping.hasSameUTF8(as: text)
    }

    /// Names and groups compare by their bytes (`String.hasSameUTF8(as:)`).
    public static func == (lhs: Client, rhs: Client) -> Bool {
        lhs.name.hasSameUTF8(as: rhs.name) && lhs.role == rhs.role && lhs.createdAt == rhs.createdAt
            && lhs.accessGroups.count == rhs.accessGroups.count
            && zip(lhs.accessGroups, rhs.accessGroups).allSatisfy { $0.hasSameUTF8(as: $1) }
    }
}

/// The registry of clients and the hashes of their tokens. A token itself is never stored.
///
/// Lookups go by the token's hash (SHA-256 of a token with ≥ 256 random bits, so a fast hash is
/// enough); implementations compare the stored hash in constant time. Throws `KeychainError`.
public protocol ClientStore: Sendable {
    /// Adds a client; errSecDuplicateItem when the name is taken.
    func addClient(_ client: Client, tokenHash: [UInt8]) throws
    /// The client whose current token has this hash, or nil (unknown or revoked).
    func client(forTokenHash tokenHash: [UInt8]) throws -> Client?
    /// All clients, by name.
    func clients() throws -> [Client]
    /// Removes a client and its token; false when there is no such client. errSecParam when it
    /// is the last admin client: revoking it would leave nobody able to administer the vault.
    /// The check and the removal are one atomic step, so revocations of the last two admins at
    /// once cannot both succeed.
    func removeClient(named name: String) throws -> Bool
    /// Replaces a client's token hash, revoking the old token; false when there is no such client.
    func replaceToken(ofClient name: String, tokenHash: [UInt8]) throws -> Bool
}

/// Makes client tokens (`kc_` + base64url of 32 random bytes) and hashes them for lookup.
public protocol ClientTokenIssuer: Sendable {
    /// A fresh token, to be shown once, and its hash, to be stored.
    func newToken() -> (token: String, hash: [UInt8])
    /// The hash under which a presented token, given as its UTF-8, is looked up.
    func hash(utf8 token: UnsafeRawBufferPointer) -> [UInt8]
}

extension ClientTokenIssuer {
    /// The hash under which `token` is looked up.
    public func hash(_ token: String) -> [UInt8] { hash(token[...]) }

    /// The hash of a token cut out of a longer text (an `Authorization` header), read where it
    /// lies: no string of its own is made for it.
    public func hash(_ token: Substring) -> [UInt8] {
        if let hash = token.utf8.withContiguousStorageIfAvailable({ hash(utf8: UnsafeRawBufferPointer($0)) }) {
            return hash
        }
        var bytes = Array(token.utf8)
        defer { SecretBytes.wipe(&bytes) }
        return bytes.withUnsafeBytes { hash(utf8: $0) }
    }
}

extension KeychainError {
    /// Revoking the only admin would leave nobody able to administer the vault (and admin.token
    /// would name a dead token): refused, as a guard like DELETE's `all=true`.
    public static func lastAdmin(_ name: String) -> KeychainError {
        .param("\"\(name)\" is the last admin client; create another admin first")
    }
}
