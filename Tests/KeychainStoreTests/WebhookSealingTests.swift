import Foundation
import KeychainCore
import KeychainTestSupport
import Testing
@testable import KeychainSQLite
@testable import KeychainStore

/// A webhook's key in the database (untrusted, as every sealed secret's): never in clear, and
/// bound to its webhook, so a key moved to another row does not sign for it.
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
}
