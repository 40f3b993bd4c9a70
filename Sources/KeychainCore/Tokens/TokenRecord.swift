public import Foundation

/// What keychaind keeps of a token: never the token, only its hash (beside this record) and this.
/// Every token has one, static (a client's) or issued by a workload login (a role's).
public struct TokenRecord: Sendable, Equatable {
    /// Whose token it is.
    public enum Source: Sendable, Equatable {
        /// A client's token, made by an admin (`POST /v1/admin/clients`, or reissued).
        case client(String)
        /// A token issued by `POST /v1/auth/jwt/login` under this role.
        case login(role: String)
    }

    /// The non-secret handle an admin looks the token up or revokes it by (`kca_` + 128 random bits).
    public let accessor: String
    public let source: Source
    /// The JWT's `sub` of a login token; nil for a client's.
    public let subject: String?
    public let issuedAt: Date
    /// Nil: the token never expires (a client's token made without `ttl`).
    public var expiresAt: Date?
    /// The hard cap no renewal passes; nil when there is none (a token that never expires).
    public let maxExpiresAt: Date?
    /// The lifetime the token was issued with, in seconds: what a renewal without `increment`
    /// grants. Nil for a token that never expires.
    public let ttlSeconds: Int64?
    /// When `renew-self` last set `expiresAt`; nil until a renewal (Vault's lookup answers
    /// `last_renewal` from it).
    public var lastRenewal: Date?

    public init(
        accessor: String, source: Source, subject: String?, issuedAt: Date, expiresAt: Date?, maxExpiresAt: Date?,
        ttlSeconds: Int64?, lastRenewal: Date? = nil
    ) {
        self.accessor = accessor
        self.source = source
        self.subject = subject
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.maxExpiresAt = maxExpiresAt
        self.ttlSeconds = ttlSeconds
        self.lastRenewal = lastRenewal
    }

    /// Whether `renew-self` may extend it: every token that expires.
    public var renewable: Bool { ttlSeconds != nil }

    /// The name a holder of this token goes by: its client's, or `jwt:<role>` (`:` never occurs
    /// in a client's name, so the two cannot meet).
    public var holderName: String {
        switch source {
        case .client(let name): name
        case .login(let role): "jwt:\(role)"
        }
    }

    /// `static` or `jwt:<role>`, as answers and audit lines give it.
    public var sourceName: String {
        switch source {
        case .client: "static"
        case .login(let role): "jwt:\(role)"
        }
    }

    /// Whether it has expired at `now`.
    public func isExpired(at now: Date) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt <= now
    }

    /// Seconds left at `now` (0 once expired); nil for a token that never expires.
    public func secondsLeft(at now: Date) -> Int64? {
        guard let expiresAt else { return nil }
        return max(0, Int64((expiresAt.timeIntervalSince(now)).rounded(.down)))
    }

    /// The lifetime the latest renewal (or, before one, the issue) granted, in seconds: from then
    /// to `expiresAt`, to the nearest second (both are kept to the millisecond, the expiry cut
    /// down), so a renewal by an hour grants 3600 whenever it is answered. Nil for a token that
    /// never expires.
    public var grantedSeconds: Int64? {
        guard let expiresAt else { return nil }
        return Int64(expiresAt.timeIntervalSince(lastRenewal ?? issuedAt).rounded())
    }

    /// The expiry a renewal at `now` by `increment` seconds (the issue TTL when nil) gives:
    /// never past `maxExpiresAt`, never before the current expiry (a renewal only extends).
    public func renewedExpiry(at now: Date, increment: Int64?) -> Date? {
        guard let ttlSeconds, let expiresAt else { return nil }
        var renewed = now.addingTimeInterval(TimeInterval(increment ?? ttlSeconds)).truncatedToMilliseconds
        if let maxExpiresAt { renewed = min(renewed, maxExpiresAt) }
        return max(renewed, expiresAt)
    }
}

/// A token and its record, to be stored: the hash it is looked up by, and the record.
public struct NewToken: Sendable {
    public let hash: [UInt8]
    public let record: TokenRecord

    public init(hash: [UInt8], record: TokenRecord) {
        self.hash = hash
        self.record = record
    }
}

/// Who presents a token: the client it belongs to (for a login token, one made of the token's
/// own groups, named `jwt:<role>`, with role `client`), and the token's record.
public struct TokenHolder: Sendable, Equatable {
    public let client: Client
    public let token: TokenRecord

    public init(client: Client, token: TokenRecord) {
        self.client = client
        self.token = token
    }
}

/// How long a client's tokens live: `ttl` seconds from issue (and from each renewal), never past
/// `maxTTL` seconds from issue. A client without one has tokens that never expire.
public struct TokenLifetime: Sendable, Equatable {
    public let ttlSeconds: Int64
    public let maxTTLSeconds: Int64

    /// A static token's cap when `maxTtl` is not given: 32 days, as Vault's default `max_ttl`.
    public static let defaultMaxTTLSeconds: Int64 = 768 * 3600

    public init(ttlSeconds: Int64, maxTTLSeconds: Int64) {
        self.ttlSeconds = ttlSeconds
        self.maxTTLSeconds = maxTTLSeconds
    }

    /// The expiry and cap of a token issued at `now`.
    public func bounds(issuedAt now: Date) -> (expiresAt: Date, maxExpiresAt: Date) {
        let cap = now.addingTimeInterval(TimeInterval(maxTTLSeconds)).truncatedToMilliseconds
        return (min(now.addingTimeInterval(TimeInterval(ttlSeconds)).truncatedToMilliseconds, cap), cap)
    }
}

/// Which live tokens an admin lists.
public enum TokenOwner: Sendable, Equatable {
    case client(String)
    case loginRole(String)
}

/// The spelling of accessors: `kca_` and 32 lowercase hex digits, as the issuer makes them and as
/// the migration that gave existing tokens theirs did (`lower(hex(randomblob(16)))`).
public enum TokenAccessor {
    public static let prefix = "kca_"

    public static func format(_ random: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = Array(prefix.utf8)
        for byte in random {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `text` could be an accessor (a path parameter checked before any lookup).
    public static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == prefix.utf8.count + 32 && text.hasPrefix(prefix)
            && text.utf8.dropFirst(prefix.utf8.count).allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
