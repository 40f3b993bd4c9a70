public import Foundation

/// A webhook (`PUT /v1/admin/webhooks/{name}`): where events of the kinds it subscribes to are
/// POSTed, signed with its secret. The secret is not part of this value: it is sealed in
/// storage, given only when it is stored (`WebhookStore.putWebhook`) and used only to sign
/// (`ClaimedDelivery.signer`).
public struct Webhook: Sendable, Equatable {
    public var name: String
    /// Called under the outbound rules of token endpoints: https, or http to loopback.
    public var url: TokenEndpointURL
    /// Never empty.
    public var events: [WebhookEvent.Kind]
    public var createdAt: Date
    public var updatedAt: Date

    public init(name: String, url: TokenEndpointURL, events: [WebhookEvent.Kind], createdAt: Date, updatedAt: Date) {
        self.name = name
        self.url = url
        self.events = Array(Set(events)).sorted()
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// 1-128 of a-z, 0-9, `.`, `_` and `-` (not `.` or `..`), as login roles' names.
    public static func isValidName(_ name: String) -> Bool { LoginRole.isValidName(name) }
}

/// A webhook's signing key (Standard Webhooks): the bytes that `whsec_` + base64 spells. 24 to 64
/// bytes, as that specification bounds them; keychaind makes 32.
public enum WebhookSecret {
    public static let minimumBytes = 24
    public static let maximumBytes = 64
    public static let generatedBytes = 32

    /// A fresh random key.
    public static func generate() -> SecretBytes {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<generatedBytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        defer { SecretBytes.wipe(&bytes) }
        return SecretBytes(bytes)
    }
}
