public import Foundation
public import KeychainCore

/// The body of `PUT /v1/admin/webhooks/{name}`: `url` and `events` required, `secret` optional.
/// Unknown keys and wrong types are errSecParam naming the key, never the secret.
public struct WebhookPutRequest: Sendable {
    public var url: TokenEndpointURL
    public var events: [WebhookEvent.Kind]
    /// The signing key `secret` spells; nil: keychaind keeps the stored one, or makes one.
    public var secret: SecretBytes?

    public init(decoding body: JSONBody) throws {
        try ItemArguments.rejectDuplicates(body.members) { $0.0 }
        var url: TokenEndpointURL?
        var events: [WebhookEvent.Kind]?
        for (name, value) in body.members {
            switch name {
            case "url":
                guard case .string(let text) = value else { throw KeychainError.param("\"url\" must be a string") }
                url = try TokenEndpointURL(text, key: "url")
            case "events":
                let names = WebhookEvent.Kind.allCases.map(\.rawValue).joined(separator: ", ")
                guard case .array(let values) = value, !values.isEmpty else {
                    throw KeychainError.param("\"events\" must be a non-empty array of \(names)")
                }
                events = try values.map { value in
                    guard case .string(let text) = value, let kind = WebhookEvent.Kind(rawValue: text) else {
                        throw KeychainError.param("\"events\" must name only \(names)")
                    }
                    return kind
                }
            case "secret":
                guard case .string(let text) = value else { throw KeychainError.param("\"secret\" must be a string") }
                secret = try WebhookSecretText.decode(text)
            default:
                throw KeychainError.param("unknown key \"\(name)\"; a webhook takes url, events and secret")
            }
        }
        guard let url else { throw KeychainError.param("the body needs \"url\"") }
        guard let events else { throw KeychainError.param("the body needs \"events\"") }
        self.url = url
        self.events = events
    }

    /// The name in the path: as login roles' names.
    public static func checkName(_ name: String) throws {
        guard Webhook.isValidName(name) else {
            throw KeychainError.param("a webhook's name is 1-128 of a-z, 0-9, \".\", \"_\" and \"-\" (not . or ..)")
        }
    }
}

/// A webhook secret as Standard Webhooks spell it: `whsec_` and the standard base64 of the key.
public enum WebhookSecretText {
    public static let prefix = "whsec_"

    /// The key `text` spells: errSecParam unless it is `whsec_` and padded base64 of 24 to 64 bytes.
    public static func decode(_ text: String) throws -> SecretBytes {
        let rule = "\"secret\" must be \"\(prefix)\" and the standard base64 of \(WebhookSecret.minimumBytes) to "
            + "\(WebhookSecret.maximumBytes) random bytes"
        guard text.hasPrefix(prefix), var bytes = Base64.decode(String(text.dropFirst(prefix.count))) else {
            throw KeychainError.param(rule)
        }
        defer { SecretBytes.wipe(&bytes) }
        guard (WebhookSecret.minimumBytes...WebhookSecret.maximumBytes).contains(bytes.count) else {
            throw KeychainError.param(rule)
        }
        return SecretBytes(bytes)
    }

    /// Writes `"whsec_<base64>"` as a JSON string member `secret`, with no `String` of it made.
    static func write(_ key: SecretBytes, into writer: inout JSONWriter) {
        var text = Array("\"\(prefix)".utf8)
        key.withUnsafeBytes { Base64.append($0, to: &text) }
        text.append(UInt8(ascii: "\""))
        writer.key("secret")
        text.withUnsafeBytes { writer.rawJSON($0) }
        SecretBytes.wipe(&text)
    }
}
