import Foundation
import KeychainCore
package import KeychainStore
import Testing

/// What a re-encryption does on every backend, checked with `#expect` through the vault a server
/// runs (`Vault`: rotate, status, keyring) and its item store's `ReencryptingStore`: call
/// `run()` from one test per backend.
///
/// `make` returns a new, unlocked vault (and whatever keeps it alive), and `another`, which gives
/// another view of the same vault once the first has done its part: on SQLite the vault closed and
/// opened again from its data directory, on PostgreSQL another node.
package struct ReencryptionConformance: Sendable {
    package struct Subject {
        package let vault: Vault
        package let another: () throws -> Vault
        package let keepAlive: AnyObject?

        package init(vault: Vault, another: @escaping () throws -> Vault, keepAlive: AnyObject?) {
            self.vault = vault
            self.another = another
            self.keepAlive = keepAlive
        }
    }

    private let make: @Sendable () throws -> Subject

    package init(_ make: @escaping @Sendable () throws -> Subject) { self.make = make }

    /// Every check, each on a vault of its own.
    package func run() throws {
        try rotateWithReencryptionMovesEverySecretToTheNewTerm()
        try aTermWithSecretsIsNotRetired()
    }

    private static let everything = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"])

    private static func item(account: String, secret: String) -> Item {
        let now = Date().truncatedToMilliseconds
        return Item(
            itemClass: .genericPassword, persistentRef: .random(),
            attributes: [
                .accessGroup: .string("g1"), .account: .string(account), .creationDate: .date(now),
                .modificationDate: .date(now),
            ],
            secret: SecretBytes(utf8: secret))
    }

    /// Every secret by account.
    private static func secrets(_ vault: Vault) throws -> [String: String] {
        var result: [String: String] = [:]
        for item in try vault.items.find(everything, limit: nil, after: nil, reading: .all).items {
            guard case .string(let account)? = item.attributes[.account] else { continue }
            result[account] = item.secret?.utf8String()
        }
        return result
    }

    /// Polls the vault's status until its re-encryption is no longer running (up to 30 s).
    private static func waitForReencryption(_ vault: Vault) -> ReencryptionProgress? {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, vault.status.reencryption?.state == .running { usleep(5_000) }
        return vault.status.reencryption
    }

    /// Rotating with re-encryption re-seals every secret (more than one batch of them) under the
    /// new term, reports its progress, retires the older terms, and every secret still opens;
    /// another view of the vault has the one term left and the same secrets.
    package func rotateWithReencryptionMovesEverySecretToTheNewTerm() throws {
        let subject = try make()
        defer { withExtendedLifetime(subject.keepAlive) {} }
        let vault = subject.vault
        // In a few transactions (a commit each would be slow on PostgreSQL; the batches re-sealed
        // are the job's own, 200 at a time).
        for start in stride(from: 0, to: 450, by: 90) {
            try vault.items.add((start..<start + 90).map { Self.item(account: "a\($0)", secret: "s\($0)") })
        }
        try vault.providers.save(ProviderStoreConformance.provider("crm", secret: "provider-secret"))
        // A webhook's key is a secret too.
        let webhookKey = WebhookSecret.generate()
        _ = try vault.webhooks.putWebhook(
            WebhookStoreConformance.webhook("ops", [.recovered]), secret: webhookKey, replacingSecret: false)
        #expect(try vault.rotate(reencrypt: false) == 2)
        try vault.items.add([Self.item(account: "after", secret: "new")])
        // A connect session's verifier is a sealed value like the others.
        let session = ConnectSessionStoreConformance.session("reencrypted")
        try vault.connectSessions.create(session)
        #expect(try vault.rotate(reencrypt: true) == 3)
        let progress = Self.waitForReencryption(vault)
        // The items' secrets, the provider's client secret, the webhook's key and the session's verifier.
        #expect(progress == ReencryptionProgress(state: .finished, targetTerm: 3, total: 454, done: 454))
        #expect(vault.status.reencryption?.fraction == 1)
        let store = try #require(vault.items as? any ReencryptingStore)
        #expect(try store.countSecrets(olderThan: 3) == 0)
        #expect(vault.status.currentTerm == 3 && vault.status.termCount == 1)
        #expect(vault.keyring.terms == [3])
        var expected = Dictionary(uniqueKeysWithValues: (0..<450).map { ("a\($0)", "s\($0)") })
        expected["after"] = "new"
        #expect(try Self.secrets(vault) == expected)
        #expect(try vault.providers.provider(named: "crm")?.clientSecret?.utf8String() == "provider-secret")
        // The old terms are retired for every view of the vault (older backups carry the keyring
        // of their time).
        let other = try subject.another()
        defer { other.close() }
        let deadline = Date().addingTimeInterval(3)
        while Date() < deadline, other.keyring.terms != [3] { usleep(1_000) }
        #expect(other.keyring.terms == [3])
        #expect(try Self.secrets(other) == expected)
        #expect(try other.providers.provider(named: "crm")?.clientSecret?.utf8String() == "provider-secret")
        #expect(try other.connectSessions.session(id: "reencrypted")?.verifier == session.verifier)
        try other.items.recordWebhookEvent(WebhookStoreConformance.event(.recovered))
        let claimed = try other.webhooks.claimDeliveries(at: WebhookStoreConformance.time, lease: 30, limit: 1)
        #expect(claimed.first.map { WebhookStoreConformance.signs($0, with: webhookKey) } == true)
    }

    /// A term that still seals a secret is kept (re-encryption interrupted, or not asked for).
    package func aTermWithSecretsIsNotRetired() throws {
        let subject = try make()
        defer { withExtendedLifetime(subject.keepAlive) {} }
        let vault = subject.vault
        try vault.items.add([Self.item(account: "a", secret: "one")])
        _ = try vault.rotate(reencrypt: false)
        let store = try #require(vault.items as? any ReencryptingStore)
        #expect(try store.countSecrets(olderThan: 2) == 1)
        #expect(try store.retireTerms(olderThan: 2) == [])
        #expect(vault.keyring.terms == [1, 2])
        // A provider's client secret holds its term as an item's secret does.
        try vault.providers.save(ProviderStoreConformance.provider("crm", secret: "provider-secret"))
        _ = try vault.items.delete(Self.everything)
        _ = try vault.rotate(reencrypt: false)
        #expect(try store.countSecrets(olderThan: 3) == 1)
        #expect(try store.retireTerms(olderThan: 3) == [1])
        #expect(vault.keyring.terms == [2, 3])
    }
}
