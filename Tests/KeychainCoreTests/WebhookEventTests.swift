import Foundation
import KeychainCore
import Testing

/// Which refresh-state moves fire which webhook event (docs/api.md, "Webhooks"): transitions
/// only, never a retry.
struct WebhookEventTests {
    static let key = RefreshKey(service: "crm", user: "ada", group: "sales")
    static let now = Date(millisecondsSince1970: 1_800_000_000_123)

    @Test(arguments: [
        (RefreshState.Condition.ok, RefreshState.Condition.failing, WebhookEvent.Kind?.some(.refreshFailed)),
        (.ok, .needsReauth, .needsReauth),
        (.failing, .needsReauth, .needsReauth),
        (.needsReauth, .failing, .refreshFailed),
        (.failing, .ok, .recovered),
        (.needsReauth, .ok, .recovered),
        (.ok, .ok, nil),
        (.failing, .failing, nil),
        (.needsReauth, .needsReauth, nil),
    ])
    func aMoveFiresItsEvent(from old: RefreshState.Condition, to new: RefreshState.Condition, fires kind: WebhookEvent.Kind?) {
        let before = RefreshState(condition: old, failures: old == .ok ? 0 : 2, lastError: old == .ok ? nil : "earlier")
        let after = RefreshState(condition: new, failures: new == .ok ? 0 : 3, lastError: new == .ok ? nil : "server_error: 503")
        let event = WebhookEvent.transition(of: Self.key, from: before, to: after, at: Self.now)
        #expect(event?.kind == kind)
        guard let event else { return }
        #expect(event.service == "crm" && event.user == "ada" && event.accessGroup == "sales")
        #expect(event.refreshState == new && event.connectId == nil && event.at == Self.now)
        #expect(event.error == (new == .ok ? nil : "server_error: 503"))
    }

    @Test func connectedCarriesItsSessionAndTheSettingsState() {
        let event = WebhookEvent.connected(Self.key, connectId: "c_1", refreshState: nil, at: Self.now)
        #expect(event.kind == .connected && event.connectId == "c_1" && event.refreshState == nil && event.error == nil)
    }

    @Test func deliveryIDsAreRandomAndPrefixed() {
        let ids = (0..<100).map { _ in WebhookDelivery.newID() }
        #expect(Set(ids).count == 100 && ids.allSatisfy { $0.hasPrefix("msg_") && $0.count == 26 })
    }
}
