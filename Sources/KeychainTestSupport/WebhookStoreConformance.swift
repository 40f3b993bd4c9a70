public import Foundation
public import KeychainCore
import KeychainStore
import Testing

/// What every `WebhookStore` (with the `ItemStore` whose transactions enqueue its deliveries)
/// must do, checked with `#expect`: call `run()` from one test per backend. `make` returns a
/// new, empty store and whatever keeps it alive.
public struct WebhookStoreConformance: Sendable {
    public typealias Store = ItemStore & WebhookStore
    public typealias Factory = @Sendable () throws -> (store: any Store, keepAlive: AnyObject?)

    private let make: Factory

    public init(_ make: @escaping Factory) { self.make = make }

    public func run() throws {
        try putReadListReplaceAndRemove()
        try eventsEnqueueWithTheirTransaction()
        try claimsLeaseAndSettle()
        try concurrentClaimsShareNothing()
    }

    public static let time = Date(millisecondsSince1970: 1_800_000_000_000)

    public static func webhook(_ name: String, _ events: [WebhookEvent.Kind], url: String = "https://hooks.example/in") throws -> Webhook {
        Webhook(name: name, url: try TokenEndpointURL(url, key: "url"), events: events, createdAt: time, updatedAt: time)
    }

    public static func event(_ kind: WebhookEvent.Kind, service: String = "crm", at: Date = time) -> WebhookEvent {
        WebhookEvent(
            kind: kind, accessGroup: "sales", service: service, user: "ada", connectId: kind == .connected ? "c_1" : nil,
            refreshState: kind == .connected ? .ok : .failing, error: kind == .refreshFailed ? "server_error: 503" : nil, at: at)
    }

    /// The signature a claimed delivery's signer makes, against one made with `key`.
    public static func signs(_ claimed: ClaimedDelivery, with key: SecretBytes) -> Bool {
        let message = Array("msg_1.1800000000.{}".utf8)
        return claimed.signer.signature(of: message) == HMACWebhookSigner(key: key).signature(of: message)
    }

    /// A webhook round-trips (its key never answered, only used); a second put without a new
    /// key keeps the first key and `createdAt`; one with a new key replaces it; webhooks list by
    /// name; a removal takes the webhook's pending deliveries with it.
    public func putReadListReplaceAndRemove() throws {
        let (store, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        let first = WebhookSecret.generate()
        let put = try store.putWebhook(Self.webhook("ops", [.needsReauth, .refreshFailed]), secret: first, replacingSecret: false)
        #expect(put.secretStored)
        #expect(put.stored.events == [.refreshFailed, .needsReauth])
        #expect(try store.webhook(named: "ops") == put.stored)
        _ = try store.putWebhook(Self.webhook("billing", [.connected]), secret: WebhookSecret.generate(), replacingSecret: false)
        #expect(try store.webhooks().map(\.name) == ["billing", "ops"])

        var changed = try Self.webhook("ops", [.recovered], url: "http://127.0.0.1:9/hook")
        changed.createdAt = Self.time.addingTimeInterval(60)
        changed.updatedAt = Self.time.addingTimeInterval(60)
        let kept = try store.putWebhook(changed, secret: WebhookSecret.generate(), replacingSecret: false)
        #expect(!kept.secretStored)
        #expect(kept.stored.createdAt == Self.time && kept.stored.updatedAt == changed.updatedAt)
        #expect(try store.webhook(named: "ops")?.url.text == "http://127.0.0.1:9/hook")
        try store.recordWebhookEvent(Self.event(.recovered))
        var claimed = try store.claimDeliveries(at: Self.time, lease: 30, limit: 10)
        #expect(claimed.count == 1 && claimed.first.map { Self.signs($0, with: first) } == true, "the first key still signs")

        let second = WebhookSecret.generate()
        #expect(try store.putWebhook(changed, secret: second, replacingSecret: true).secretStored)
        claimed = try store.claimDeliveries(at: Self.time.addingTimeInterval(31), lease: 30, limit: 10)
        #expect(claimed.count == 1 && claimed.first.map { Self.signs($0, with: second) } == true, "the new key signs")

        #expect(try store.removeWebhook(named: "ops"))
        #expect(try !store.removeWebhook(named: "ops"))
        #expect(try store.webhook(named: "ops") == nil)
        #expect(try store.pendingDeliveries().isEmpty, "a removed webhook's deliveries go with it")
        #expect(try store.webhooks().map(\.name) == ["billing"])
    }

    /// An event recorded in a transaction is enqueued once per webhook subscribed to its kind
    /// (each with an id of its own) when the transaction commits, and not at all when it fails.
    public func eventsEnqueueWithTheirTransaction() throws {
        let (store, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        _ = try store.putWebhook(Self.webhook("a", [.refreshFailed, .recovered]), secret: WebhookSecret.generate(), replacingSecret: false)
        _ = try store.putWebhook(Self.webhook("b", [.refreshFailed]), secret: WebhookSecret.generate(), replacingSecret: false)
        _ = try store.putWebhook(Self.webhook("c", [.connected]), secret: WebhookSecret.generate(), replacingSecret: false)

        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try store.transaction { transaction in
                try transaction.recordWebhookEvent(Self.event(.refreshFailed))
                throw Refused()
            }
        }
        #expect(try store.pendingDeliveries().isEmpty, "a rolled-back transaction enqueues nothing")

        let failed = Self.event(.refreshFailed)
        try store.transaction { transaction in
            try transaction.recordWebhookEvent(failed)
            try transaction.add([item(account: "x", service: "crm", group: "sales")])
        }
        let pending = try store.pendingDeliveries()
        #expect(pending.map(\.webhook).sorted() == ["a", "b"])
        #expect(Set(pending.map(\.id)).count == 2 && pending.allSatisfy { $0.id.hasPrefix("msg_") && $0.id.count >= 24 })
        #expect(pending.allSatisfy { $0.event == failed && $0.attempts == 0 })

        try store.recordWebhookEvent(Self.event(.connected))
        let connected = try store.pendingDeliveries().filter { $0.event.kind == .connected }
        #expect(connected.map(\.webhook) == ["c"])
        #expect(connected.first?.event == Self.event(.connected), "every field round-trips, connectId included")
    }

    /// Due deliveries are claimed oldest first, each counted and leased: not claimed again
    /// within the lease, claimed again (same id) after it; a retry is due when it says; a
    /// settled delivery is gone.
    public func claimsLeaseAndSettle() throws {
        let (store, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        let key = WebhookSecret.generate()
        _ = try store.putWebhook(Self.webhook("a", WebhookEvent.Kind.allCases), secret: key, replacingSecret: false)
        try store.recordWebhookEvent(Self.event(.refreshFailed, service: "later", at: Self.time.addingTimeInterval(5)))
        try store.recordWebhookEvent(Self.event(.refreshFailed, service: "first"))
        #expect(try store.claimDeliveries(at: Self.time.addingTimeInterval(-1), lease: 30, limit: 10).isEmpty, "none is due yet")

        let claimed = try store.claimDeliveries(at: Self.time.addingTimeInterval(10), lease: 30, limit: 1)
        #expect(claimed.map(\.delivery.event.service) == ["first"])
        #expect(claimed.first?.delivery.attempts == 1)
        #expect(claimed.first?.url.text == "https://hooks.example/in")
        #expect(claimed.first.map { Self.signs($0, with: key) } == true)
        let id = try #require(claimed.first?.delivery.id)

        let next = try store.claimDeliveries(at: Self.time.addingTimeInterval(10), lease: 30, limit: 10)
        #expect(next.map(\.delivery.event.service) == ["later"], "a leased delivery is not claimed again")
        let afterLease = try store.claimDeliveries(at: Self.time.addingTimeInterval(41), lease: 30, limit: 10)
        #expect(afterLease.map(\.delivery.id).contains(id), "an unsettled delivery comes back after its lease, same id")
        #expect(afterLease.first { $0.delivery.id == id }?.delivery.attempts == 2)
        for other in afterLease where other.delivery.id != id { try store.settleDelivery(other.delivery.id, retryAt: nil) }

        try store.settleDelivery(id, retryAt: Self.time.addingTimeInterval(100))
        #expect(try store.claimDeliveries(at: Self.time.addingTimeInterval(99), lease: 30, limit: 10).isEmpty)
        #expect(try store.claimDeliveries(at: Self.time.addingTimeInterval(100), lease: 30, limit: 10).map(\.delivery.id) == [id])
        try store.settleDelivery(id, retryAt: nil)
        #expect(try !store.pendingDeliveries().map(\.id).contains(id))
    }

    /// Claims made at once hand out each delivery once.
    public func concurrentClaimsShareNothing() throws {
        let (store, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        _ = try store.putWebhook(Self.webhook("a", [.needsReauth]), secret: WebhookSecret.generate(), replacingSecret: false)
        for index in 0..<40 { try store.recordWebhookEvent(Self.event(.needsReauth, service: "s\(index)")) }
        let claims = ClaimLog()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<20 {
                let ids = (try? store.claimDeliveries(at: Self.time, lease: 600, limit: 3))?.map(\.delivery.id) ?? []
                claims.add(ids)
            }
        }
        let ids = claims.all
        #expect(ids.count == 40 && Set(ids).count == 40, "each delivery claimed once: \(ids.count) claims")
    }
}

private final class ClaimLog: @unchecked Sendable {
    // @unchecked: `ids` is only touched under `lock`.
    private let lock = NSLock()
    private var ids: [String] = []

    func add(_ more: [String]) { lock.withLock { ids += more } }
    var all: [String] { lock.withLock { ids } }
}
