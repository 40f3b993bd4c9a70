package import Foundation
package import KeychainCore

/// What both backends' webhook tables share: how a webhook's subscribed kinds and a delivery's
/// event are spelled in their columns, and the signer over a sealed key.
package enum WebhookColumns {
    /// The kinds as one text column: their names, comma-separated, in `Kind`'s order.
    package static func events(_ kinds: [WebhookEvent.Kind]) -> String {
        kinds.map(\.rawValue).joined(separator: ",")
    }

    package static func events(_ text: String) throws -> [WebhookEvent.Kind] {
        try text.split(separator: ",").map { name in
            guard let kind = WebhookEvent.Kind(rawValue: String(name)) else {
                throw KeychainError.decode("a stored webhook subscribes to an unknown event \"\(name)\"")
            }
            return kind
        }
    }

    /// A stored webhook from its columns.
    package static func webhook(name: String, url: String, events: String, created: Int64, updated: Int64) throws -> Webhook {
        guard let url = try? TokenEndpointURL(url, key: "url") else {
            throw KeychainError.decode("webhook \"\(name)\" has a stored URL keychaind may not call")
        }
        return Webhook(
            name: name, url: url, events: try Self.events(events), createdAt: Date(millisecondsSince1970: created),
            updatedAt: Date(millisecondsSince1970: updated))
    }

    /// Which of `webhooks` (name, subscribed kinds as stored) an event of `kind` goes to.
    package static func subscribers(of kind: WebhookEvent.Kind, among webhooks: [(name: String, events: String)]) -> [String] {
        webhooks.filter { $0.events.split(separator: ",").contains { $0 == kind.rawValue } }.map(\.name)
    }

    /// A delivery's event from its columns.
    package static func event(
        kind: String, accessGroup: String, service: String, user: String?, connectId: String?, refreshState: String?,
        error: String?, at: Int64
    ) throws -> WebhookEvent {
        guard let kind = WebhookEvent.Kind(rawValue: kind) else {
            throw KeychainError.decode("a pending webhook delivery has an unknown event \"\(kind)\"")
        }
        let state = try refreshState.map { name in
            guard let state = RefreshState.Condition(rawValue: name) else {
                throw KeychainError.decode("a pending webhook delivery has an unknown refresh state \"\(name)\"")
            }
            return state
        }
        return WebhookEvent(
            kind: kind, accessGroup: accessGroup, service: service, user: user, connectId: connectId, refreshState: state,
            error: error, at: Date(millisecondsSince1970: at))
    }
}

extension Keyring {
    /// The signer of the webhook `name`, its sealed key opened (and wiped once prepared).
    package func webhookSigner(opening box: [UInt8], webhook name: String) throws -> any WebhookSigner {
        HMACWebhookSigner(key: try open(box, binding: .webhookSecret(name)))
    }
}

/// HMAC-SHA256 under a webhook's key (24 to 64 bytes: at most SHA-256's block, as `HMACKey`
/// needs), prepared once per delivery attempt.
package struct HMACWebhookSigner: WebhookSigner {
    private let key: HMACKey

    package init(key: SecretBytes) { self.key = HMACKey(key) }

    package func signature(of message: [UInt8]) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: HMACKey.macSize)
        message.withUnsafeBytes { bytes in mac.withUnsafeMutableBytes { key.mac(bytes, into: $0) } }
        return mac
    }
}
