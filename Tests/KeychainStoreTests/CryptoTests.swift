import Foundation
import KeychainTestSupport
import Synchronization
import KeychainCore
import Testing
@testable import KeychainStore
@testable import KeychainSQLite

struct WycheproofFile: Decodable {
    struct Case: Decodable, Sendable, CustomTestStringConvertible {
        let tcId: Int
        let comment: String
        let key, iv, aad, msg, ct, tag: String
        let result: String
        var testDescription: String { "tcId \(tcId) \(result) \(comment)" }
    }
    let tests: [Case]

    static func load() throws -> [Case] {
        let url = try #require(
            Bundle.module.url(forResource: "aes_gcm_256_96_wycheproof", withExtension: "json", subdirectory: "Fixtures"))
        return try JSONDecoder().decode(WycheproofFile.self, from: Data(contentsOf: url)).tests
    }
}

@Suite("AES-256-GCM and sealed boxes")
struct CryptoTests {
    @Test func wycheproofVectors() throws {
        let cases = try WycheproofFile.load()
        #expect(cases.count >= 30)
        #expect(cases.contains { $0.result == "valid" } && cases.contains { $0.result == "invalid" })
        for vector in cases {
            let cipher = try AESGCM(key: SecretBytes(bytes(hex: vector.key)))
            let ct = bytes(hex: vector.ct), tag = bytes(hex: vector.tag)
            let opened = Result { try cipher.open(ciphertext: ct, tag: tag, nonce: bytes(hex: vector.iv), aad: bytes(hex: vector.aad)) }
            if vector.result == "valid" {
                let sealed = try cipher.seal(bytes(hex: vector.msg), nonce: bytes(hex: vector.iv), aad: bytes(hex: vector.aad))
                #expect(sealed == ct + tag, "tcId \(vector.tcId) seal")
                #expect(try opened.get().copyBytes() == bytes(hex: vector.msg), "tcId \(vector.tcId) open")
            } else {
                #expect(throws: CryptoError.authenticationFailure, "tcId \(vector.tcId)") { try opened.get() }
            }
        }
    }

    @Test func contextReuseAcrossMessagesAndThreads() async throws {
        let cipher = try AESGCM(key: try MasterKeyFile.generate())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in 0..<500 {
                        let message = Array("message \(worker)-\(index)".utf8)
                        let nonce = try SecureRandom.bytes(12)
                        let sealed = try cipher.seal(message, nonce: nonce, aad: [UInt8(worker)])
                        let opened = try cipher.open(
                            ciphertext: Array(sealed.dropLast(16)), tag: Array(sealed.suffix(16)), nonce: nonce,
                            aad: [UInt8(worker)])
                        #expect(opened.copyBytes() == message)
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    @Test func openingContextsServeMoreThreadsThanTheyAre() throws {
        let cipher = try AESGCM(key: try MasterKeyFile.generate())
        #expect((1...AESGCM.maxOpeners).contains(cipher.openerCount))
        let nonce = try SecureRandom.bytes(12)
        let message = Array("shared between threads".utf8)
        let sealed = try cipher.seal(message, nonce: nonce, aad: [7])
        let threads = cipher.openerCount * 2 + 1
        let failures = Mutex(0)
        let done = DispatchGroup()
        // Real threads (not tasks, which the cooperative pool caps at the core count), so that
        // every context is busy at times and threads wait for one.
        for _ in 0..<threads {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                for _ in 0..<300 {
                    let opened = try? cipher.open(
                        ciphertext: Array(sealed.dropLast(16)), tag: Array(sealed.suffix(16)), nonce: nonce, aad: [7])
                    if opened?.copyBytes() != message { failures.withLock { $0 += 1 } }
                }
            }
        }
        done.wait()
        #expect(failures.withLock { $0 } == 0)
        // A wrong tag still fails on whichever context opens it.
        for _ in 0..<(cipher.openerCount + 1) {
            #expect(throws: CryptoError.authenticationFailure) {
                _ = try cipher.open(ciphertext: Array(sealed.dropLast(16)), tag: [UInt8](repeating: 0, count: 16), nonce: nonce, aad: [7])
            }
        }
    }

    /// `text` sealed by the fixture's keyring for a new generic password of group g1.
    static func seal(_ text: String, in fixture: VaultFixture) throws -> (binding: SealBinding, box: [UInt8]) {
        let binding = SealBinding(itemClass: .genericPassword, persistentRef: .random(), accessGroup: "g1")
        let box = try fixture.vault.sqlitePool!.write { db in
            try db.transaction { try fixture.vault.keyring.seal(SecretBytes(utf8: text), binding: binding, on: db) }
        }
        return (binding, box)
    }

    @Test func lockReleasesTheCiphersAndUnlockBringsThemBack() throws {
        let fixture = try VaultFixture()
        let keyring = fixture.vault.keyring
        let (binding, box) = try Self.seal("kept", in: fixture)
        weak var cipher = try keyring.cipher(term: keyring.currentTerm)
        #expect(cipher != nil)
        #expect(try keyring.open(box, binding: binding).utf8String() == "kept")
        fixture.vault.lock()
        // Nothing holds the cipher any more: its contexts were freed (EVP_CIPHER_CTX_free cleanses).
        #expect(cipher == nil)
        #expect(throws: KeychainError.self) { _ = try keyring.cipher(term: 1) }
        #expect(throws: KeychainError.self) { _ = try keyring.open(box, binding: binding) }
        try fixture.vault.unlock()
        #expect(try keyring.open(box, binding: binding).utf8String() == "kept")
    }

    /// The audit key: stable while the vault lives, per label, and gone while locked.
    @Test func derivedMACsAreStableAndNeedTheKeys() throws {
        let fixture = try VaultFixture()
        let keyring = fixture.vault.keyring
        func mac(_ label: String, _ text: String) -> [UInt8]? {
            var output = [UInt8](repeating: 0, count: 32)
            let ok = Array(text.utf8).withUnsafeBytes { message in
                output.withUnsafeMutableBytes { keyring.derivedMAC(label: label, message, into: $0) }
            }
            return ok ? output : nil
        }
        let first = try #require(mac("audit", "account\0rbob"))
        #expect(mac("audit", "account\0rbob") == first)
        #expect(mac("other", "account\0rbob") != first)
        #expect(mac("audit", "account\0ralice") != first)
        fixture.vault.lock()
        #expect(mac("audit", "account\0rbob") == nil)
        try fixture.vault.unlock()
        #expect(mac("audit", "account\0rbob") == first)
        _ = try keyring.rotate()
        #expect(mac("audit", "account\0rbob") == first, "derived from the master key, which rotation keeps")
    }

    @Test func everyBitFlipInASealedBoxFailsWithDecode() throws {
        let fixture = try VaultFixture()
        let keyring = fixture.vault.keyring
        let (binding, box) = try Self.seal("top secret", in: fixture)
        #expect(box.count == SealedBox.overhead + 10)
        #expect(box[0] == 1)
        #expect(try keyring.open(box, binding: binding).utf8String() == "top secret")
        for index in box.indices {
            for bit in [0, 7] {
                var altered = box
                altered[index] ^= UInt8(1 << bit)
                #expect(throws: KeychainError.self, "byte \(index) bit \(bit)") {
                    do { _ = try keyring.open(altered, binding: binding) } catch let error as KeychainError {
                        #expect(error.code == .decode)
                        throw error
                    }
                }
            }
        }
        // Truncated boxes fail too, never crash.
        for length in [0, 1, 5, SealedBox.overhead - 1] {
            #expect(throws: KeychainError.self) { _ = try keyring.open(Array(box.prefix(length)), binding: binding) }
        }
        // Failures are logged without the secret.
        let logs = fixture.logs.lines.withLock { $0 }
        #expect(logs.contains { $0.contains("stored secret fails to open") })
        #expect(!logs.contains { $0.contains("top secret") })
    }

    @Test func aBoxMovedToAnotherItemFails() throws {
        let fixture = try VaultFixture()
        let keyring = fixture.vault.keyring
        let (binding, box) = try Self.seal("s", in: fixture)
        guard case .item(_, let ref, _) = binding else { preconditionFailure("an item's binding") }
        let others: [SealBinding] = [
            SealBinding(itemClass: .genericPassword, persistentRef: .random(), accessGroup: "g1"),
            SealBinding(itemClass: .genericPassword, persistentRef: ref, accessGroup: "g2"),
            SealBinding(itemClass: .internetPassword, persistentRef: ref, accessGroup: "g1"),
            // The same names in a KV row's binding (another table's label).
            .kvVersion(KVSecretKey(group: "g1", path: ref.rawValue), number: 1),
            .kvCustomMetadata(KVSecretKey(group: "g1", path: ref.rawValue)),
        ]
        for other in others {
            #expect(throws: KeychainError.decode("stored secret failed authentication")) {
                _ = try keyring.open(box, binding: other)
            }
        }
    }

    @Test func secretCopiedBetweenRowsInTheDatabaseFailsOnRead() throws {
        let fixture = try VaultFixture()
        let store = fixture.vault.items
        let a = item(account: "a", secret: "alpha"), b = item(account: "b", secret: "beta")
        try store.add([a, b])
        try fixture.vault.sqlitePool!.write { db in
            try db.execute(
                "UPDATE items SET secret = (SELECT secret FROM items WHERE persistent_ref = ?) WHERE persistent_ref = ?",
                [.text(a.persistentRef.rawValue), .text(b.persistentRef.rawValue)])
        }
        let filterB = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], persistentRef: b.persistentRef)
        #expect(throws: KeychainError.self) { try store.find(filterB, limit: nil, after: nil, reading: .all) }
        // Attributes stay readable, and the other item is untouched.
        #expect(try store.find(filterB, limit: nil, after: nil, reading: .attributes).items.count == 1)
        let filterA = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"], persistentRef: a.persistentRef)
        #expect(try store.find(filterA, limit: nil, after: nil, reading: .all).items.first?.secret?.utf8String() == "alpha")
    }

    @Test func digestsAndTokens() throws {
        #expect(Digest.sha256(Array("abc".utf8)) == bytes(hex: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        // RFC 4231 test case 2.
        let mac = Digest.hmacSHA256(key: SecretBytes(utf8: "Jefe"), Array("what do ya want for nothing?".utf8))
        #expect(mac == bytes(hex: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
        // The prepared key the audit tags use gives the same MAC, every time it is used.
        let prepared = HMACKey(SecretBytes(utf8: "Jefe"))
        func preparedMAC(_ message: [UInt8]) -> [UInt8] {
            var output = [UInt8](repeating: 0, count: 32)
            message.withUnsafeBytes { message in output.withUnsafeMutableBytes { prepared.mac(message, into: $0) } }
            return output
        }
        for _ in 0..<2 { #expect(preparedMAC(Array("what do ya want for nothing?".utf8)) == mac) }
        #expect(preparedMAC([]) == Digest.hmacSHA256(key: SecretBytes(utf8: "Jefe"), []))
        let block = [UInt8](repeating: 0xA5, count: 200)  // several blocks: longer than one SHA-256 block
        #expect(preparedMAC(block) == Digest.hmacSHA256(key: SecretBytes(utf8: "Jefe"), block))
        #expect(Digest.sha256([]) == bytes(hex: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
        let issuer = OpenSSLClientTokenIssuer()
        let (token, hash) = issuer.newToken()
        #expect(token.hasPrefix("kc_") && token.count == 3 + 43)
        #expect(!token.contains("=") && !token.contains("+") && !token.contains("/"))
        #expect(hash == issuer.hash(token) && hash == Digest.sha256(Array(token.utf8)))
        #expect(issuer.newToken().token != token)
    }
}
