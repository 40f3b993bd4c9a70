public import KeychainCore

/// The body keychaind POSTs for an event (docs/api.md, "Webhooks"): every member always there,
/// `null` when it does not apply. Never a token, never OAuth state.
public enum WebhookEventBody {
    public static func encode(_ event: WebhookEvent) -> [UInt8] {
        JSONWriter.object(capacity: 256) { body in
            body.member("type", event.kind.rawValue)
            body.member("accessGroup", event.accessGroup)
            body.member("service", event.service)
            body.member("user", event.user)
            body.member("connectId", event.connectId)
            body.member("refreshState", event.refreshState?.rawValue)
            body.member("error", event.error)
            body.member("at", event.at)
        }
    }
}
