public import Foundation

/// What keychaind keeps about a service's access token besides the token itself: when it
/// expires and, when a refresh setting keeps it fresh, how long before expiry it is renewed.
/// Kept in the access token item's `generic` attribute (kSecAttrGeneric, Apple's attribute for
/// application-defined data), so tokens stay ordinary generic passwords, visible and changeable
/// through the item routes.
public struct TokenMetadata: Sendable, Equatable {
    public var expiresAt: Date?
    /// Seconds before `expiresAt` at which a fetch asks the refresher first; written by the
    /// refresher with the tokens it stores. Only a hint for the fetch: with none, a token with
    /// a refresh setting is refreshed when it has expired (and by the background refresher).
    public var refreshBefore: Int?
    /// How many times tokens were stored under this name (a PUT, a refresh), counting this one:
    /// the `metadata.version` of the Vault surface's `tokens/` paths. Nil: stored before versions.
    public var version: Int?

    /// The longest an access token is stored as living, in seconds: ten years, whoever says how
    /// long (a PUT's `expiresIn`, a provider's `expires_in`), so that every expiry stays far
    /// inside what millisecond dates and RFC 3339's four-digit years hold.
    public static let maximumLifetime: Int64 = 10 * 366 * 24 * 3600

    public init(expiresAt: Date? = nil, refreshBefore: Int? = nil, version: Int? = nil) {
        self.expiresAt = expiresAt
        self.refreshBefore = refreshBefore
        self.version = version
    }
}

/// How token metadata is written into, and read from, an access token item's `generic` bytes.
/// The format is the API's (`TokenMetadataJSON` in KeychainAPI); Core says what the metadata
/// means, not how it is spelled.
public protocol TokenMetadataFormat: Sendable {
    func encode(_ metadata: TokenMetadata) -> [UInt8]
    /// The metadata `bytes` hold; nil when they hold none (an item written through the item
    /// routes may hold anything there). Runs on every token fetch.
    func decode(_ bytes: [UInt8]) -> TokenMetadata?
}
