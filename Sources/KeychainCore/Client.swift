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
    /// How long its tokens live; nil: they never expire.
    public let tokenLifetime: TokenLifetime?

    public init(name: String, accessGroups: [String], role: Role, createdAt: Date, tokenLifetime: TokenLifetime? = nil) {
        self.name = name
        self.accessGroups = accessGroups
        self.role = role
        self.createdAt = createdAt
        self.tokenLifetime = tokenLifetime
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
            && lhs.tokenLifetime == rhs.tokenLifetime
            && lhs.accessGroups.count == rhs.accessGroups.count
            && zip(lhs.accessGroups, rhs.accessGroups).allSatisfy { $0.hasSameUTF8(as: $1) }
    }
}

/// The registry of clients and of every token's record (`TokenRecord`) and hash. A token itself
/// is never stored.
///
/// Lookups go by the token's hash (SHA-256 of a token with ≥ 256 random bits, so a fast hash is
/// enough); implementations compare the stored hash in constant time. Throws `KeychainError`.
///
/// No change may leave the vault without an admin: every removal or revocation that would leave
/// no admin client with a live token (one that has not expired at `now`) is errSecParam
/// (`KeychainError.lastAdmin`), checked in the same atomic step as the change, so that two
/// revocations at once cannot both pass.
public protocol ClientStore: Sendable {
    /// Adds a client and its first token; errSecDuplicateItem when the name is taken.
    func addClient(_ client: Client, token: NewToken) throws
    /// The holder of the token with this hash, or nil (unknown, revoked or purged). An expired
    /// token is returned, for its caller to refuse as expired.
    func holder(ofTokenHash tokenHash: [UInt8]) throws -> TokenHolder?
    /// The holder of the token with this accessor, read from storage (never a cache), or nil.
    func holder(ofAccessor accessor: String) throws -> TokenHolder?
    /// All clients, by name.
    func clients() throws -> [Client]
    /// The client of this name, or nil.
    func client(named name: String) throws -> Client?
    /// Removes a client and its tokens; false when there is no such client.
    func removeClient(named name: String, now: Date) throws -> Bool
    /// Revokes every token of a client and gives it `token`; false when there is no such client.
    func replaceToken(ofClient name: String, token: NewToken) throws -> Bool
    /// Stores a token a login issued, with the groups it grants, unless its role already holds
    /// `liveLimit` tokens that have not expired at `now`: then false and nothing is stored.
    func addLoginToken(_ token: NewToken, accessGroups: [String], liveLimit: Int, now: Date) throws -> Bool
    /// The tokens of a client or a login role that have not expired at `now`, oldest first.
    func tokens(of owner: TokenOwner, now: Date) throws -> [TokenRecord]
    /// Whether an admin client holds a token that never expires.
    func adminHasTokenWithoutExpiry() throws -> Bool
    /// Sets a token's expiry and records `now` as its `lastRenewal` (a renewal); the record as
    /// stored after, nil when there is no such token.
    func renewToken(accessor: String, expiresAt: Date, now: Date) throws -> TokenRecord?
    /// Revokes one token; false when there is no such token.
    func revokeToken(accessor: String, now: Date) throws -> Bool
    /// Revokes every token a login role issued; how many.
    func revokeLoginTokens(role: String) throws -> Int
    /// Forgets tokens that expired before `cutoff`; how many.
    func purgeTokens(expiredBefore cutoff: Date) throws -> Int
}

/// Makes client tokens (`kc_` + base64url of 32 random bytes) and their accessors, and hashes
/// tokens for lookup.
public protocol ClientTokenIssuer: Sendable {
    /// A fresh token, to be shown once, and its hash, to be stored.
    func newToken() -> (token: String, hash: [UInt8])
    /// A fresh accessor: `kca_` + 32 hex digits (128 random bits).
    func newAccessor() -> String
    /// The hash under which a presented token, given as its UTF-8, is looked up.
    func hash(utf8 token: UnsafeRawBufferPointer) -> [UInt8]
}

extension ClientTokenIssuer {
    /// A fresh token for `source`, to be shown once, with its record: expiring per `lifetime`
    /// (never when nil).
    public func issue(
        for source: TokenRecord.Source, subject: String? = nil, lifetime: TokenLifetime?, now: Date
    ) -> (token: String, new: NewToken) {
        let (token, hash) = newToken()
        let issuedAt = now.truncatedToMilliseconds
        let bounds = lifetime?.bounds(issuedAt: issuedAt)
        let record = TokenRecord(
            accessor: newAccessor(), source: source, subject: subject, issuedAt: issuedAt,
            expiresAt: bounds?.expiresAt, maxExpiresAt: bounds?.maxExpiresAt, ttlSeconds: lifetime?.ttlSeconds)
        return (token, NewToken(hash: hash, record: record))
    }

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
    /// Revoking the only admin (or the last live admin token) would leave nobody able to
    /// administer the vault: refused, as a guard like DELETE's `all=true`.
    public static func lastAdmin(_ name: String) -> KeychainError {
        .param("\"\(name)\" holds the last live admin token; create another admin first")
    }
}
