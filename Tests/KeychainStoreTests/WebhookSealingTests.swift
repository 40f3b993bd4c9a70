import Foundation
import KeychainCore
import KeychainTestSupport
import Testing
@testable import KeychainPostgreSQL
@testable import KeychainSQLite
@testable import KeychainStore

/// What the webhook tables hold is read as untrusted, as every table is: a key never in clear and
/// bound to its webhook, so a key moved to another row does not sign for it; a pending delivery
/// this release cannot read never holds up the others.
@Suite struct WebhookSealingTests {
    @Test func aWebhookKeyIsSealedAndBoundToItsName() throws {
        let fixture = try VaultFixture()
        let webhooks = fixture.vault.webhooks
        let key = WebhookSecret.generate()
        _ = try webhooks.putWebhook(WebhookStoreConformance.webhook("a", [.recovered]), secret: key, replacingSecret: false)
        _ = try webhooks.putWebhook(
            WebhookStoreConformance.webhook("b", [.needsReauth]), secret: WebhookSecret.generate(), replacingSecret: false)
        let pool = try #require(fixture.vault.sqlitePool)
        try pool.write { _ = try $0.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        let file = Array(FileManager.default.contents(atPath: fixture.dataDirectory.databasePath) ?? Data())
        let plain = key.copyBytes()
        #expect(!file.isEmpty)
        #expect(!(0...(file.count - plain.count)).contains { Array(file[$0..<$0 + plain.count]) == plain }, "the key is not in the file")

        // Moved to webhook b, a's sealed key no longer opens.
        _ = try pool.write { db in
            try db.execute("UPDATE webhooks SET secret = (SELECT secret FROM webhooks WHERE name = 'a') WHERE name = 'b'")
        }
        try fixture.vault.items.recordWebhookEvent(WebhookStoreConformance.event(.needsReauth))
        #expect {
            _ = try webhooks.claimDeliveries(at: WebhookStoreConformance.time, lease: 30, limit: 1)
        } throws: { error in
            (error as? KeychainError)?.code == .decode
        }
    }

    /// A row whose event kind this release does not know (a later release's, after a roll back)
    /// is removed when it comes up for a claim; the next claim takes the delivery behind it.
    @Test(arguments: ["sqlite", "postgresql"])
    func anUnreadableDeliveryIsDroppedNotRetriedForEver(backend: String) throws {
        let store: any ItemStore & WebhookStore
        let alter: (String) throws -> Void
        var keepAlive: AnyObject?
        if backend == "sqlite" {
            let fixture = try VaultFixture()
            keepAlive = fixture
            store = try #require(fixture.vault.webhooks as? SQLiteItemStore)
            let pool = try #require(fixture.vault.sqlitePool)
            alter = { sql in _ = try pool.write { try $0.execute(sql) } }
        } else {
            let database = try PGTestDatabase()
            store = try database.itemStore()
            alter = { sql in _ = try database.connect().execute(sql) }
        }
        defer { withExtendedLifetime(keepAlive) {} }
        _ = try store.putWebhook(
            WebhookStoreConformance.webhook("a", WebhookEvent.Kind.allCases), secret: WebhookSecret.generate(), replacingSecret: false)
        try store.recordWebhookEvent(WebhookStoreConformance.event(.needsReauth, service: "first"))
        try alter("UPDATE webhook_deliveries SET kind = 'tokenRotated'")
        try store.recordWebhookEvent(
            WebhookStoreConformance.event(.needsReauth, service: "second", at: WebhookStoreConformance.time.addingTimeInterval(1)))
        let at = WebhookStoreConformance.time.addingTimeInterval(2)
        #expect(try store.claimDeliveries(at: at, lease: 30, limit: 1).isEmpty, "the unreadable one, first in line, is dropped")
        #expect(try store.pendingDeliveries().map(\.event.service) == ["second"])
        #expect(try store.claimDeliveries(at: at, lease: 30, limit: 1).map(\.delivery.event.service) == ["second"])
        #expect(try store.pendingDeliveries().map(\.event.service) == ["second"])
    }
}
