public import Foundation
import KeychainAPI
public import KeychainCore

extension Router {
    /// Webhooks (admin only): `PUT /admin/webhooks/{name}` stores one (its key made and answered
    /// once when the body has none and the webhook is new; a given key replaces the stored one),
    /// `GET` reads one or lists them, `DELETE` removes one with its pending deliveries. The key is
    /// never answered by a read.
    public mutating func addWebhookRoutes(webhooks: any WebhookStore, clock: @escaping @Sendable () -> Date = { Date() }) {
        add(.put, "/admin/webhooks/{name}", access: .admin, audit: .pathParameters) { context in
            let name = context.parameters["name"] ?? ""
            try WebhookPutRequest.checkName(name)
            let request = try WebhookPutRequest(decoding: context.jsonBody())
            let now = clock().truncatedToMilliseconds
            let webhook = Webhook(name: name, url: request.url, events: request.events, createdAt: now, updatedAt: now)
            let secret = request.secret ?? WebhookSecret.generate()
            let (stored, secretStored) = try webhooks.putWebhook(webhook, secret: secret, replacingSecret: request.secret != nil)
            let generated = secretStored && request.secret == nil
            return .json(WebhookAnswer.webhook(stored, generatedSecret: generated ? secret : nil))
        }
        add(.get, "/admin/webhooks", access: .admin, audit: .none) { _ in
            .json(WebhookAnswer.webhooks(try webhooks.webhooks()))
        }
        add(.get, "/admin/webhooks/{name}", access: .admin, audit: .pathParameters) { context in
            let name = context.parameters["name"] ?? ""
            guard let webhook = try webhooks.webhook(named: name) else { throw KeychainError.itemNotFound("no webhook named \"\(name)\"") }
            return .json(WebhookAnswer.webhook(webhook, generatedSecret: nil))
        }
        add(.delete, "/admin/webhooks/{name}", access: .admin, audit: .pathParameters) { context in
            let name = context.parameters["name"] ?? ""
            guard try webhooks.removeWebhook(named: name) else { throw KeychainError.itemNotFound("no webhook named \"\(name)\"") }
            return .json(StatusAnswer.count(.deleted, 1))
        }
    }
}
