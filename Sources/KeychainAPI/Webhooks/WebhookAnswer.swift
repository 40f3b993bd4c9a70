public import KeychainCore

/// The answers of the webhook routes: one webhook (with its key only when keychaind just made
/// it: answered once), or the list. Never the key otherwise.
public enum WebhookAnswer: JSONAnswer {
    case webhook(Webhook, generatedSecret: SecretBytes?)
    case webhooks([Webhook])

    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: 512) { answer in
            answer.member("status", 0)
            switch self {
            case .webhook(let webhook, let secret):
                answer.key("webhook")
                answer.object { object in
                    object.webhook(webhook)
                    if let secret { WebhookSecretText.write(secret, into: &object) }
                }
            case .webhooks(let webhooks):
                answer.key("webhooks")
                answer.array { list in
                    for webhook in webhooks { list.object { $0.webhook(webhook) } }
                }
            }
        }
    }
}

extension JSONWriter {
    fileprivate mutating func webhook(_ webhook: Webhook) {
        member("name", webhook.name)
        member("url", webhook.url.text)
        key("events")
        array { list in
            for kind in webhook.events { list.string(kind.rawValue) }
        }
        member("createdAt", webhook.createdAt)
        member("updatedAt", webhook.updatedAt)
    }
}
