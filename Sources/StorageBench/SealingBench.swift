import Foundation
import KeychainCore
import KeychainStore

/// The crypto loop: secrets sealed and opened as the store does it, through the `package` parts of
/// KeychainStore's Crypto/ (nothing of this is in the server).
enum SealingBench {
    /// Seals and opens `size`-byte secrets (as item secrets are: fresh nonce, AAD binding) for
    /// `seconds`; returns seal+open pairs per second.
    static func sealOpenPerSecond(size: Int, seconds: Double) throws -> Double {
        let (cipher, secret, binding) = try sealingFixture(size: size)
        return try perSecond(for: seconds) {
            let box = try SealedBox.seal(secret, term: 1, cipher: cipher, binding: binding)
            _ = try SealedBox.open(box, cipher: cipher, binding: binding)
        }
    }

    /// Seals only (no open, so no `SecretBytes` allocation) for `seconds`; seals per second.
    static func sealPerSecond(size: Int, seconds: Double) throws -> Double {
        let (cipher, secret, binding) = try sealingFixture(size: size)
        return try perSecond(for: seconds) { _ = try SealedBox.seal(secret, term: 1, cipher: cipher, binding: binding) }
    }

    private static func sealingFixture(size: Int) throws -> (AESGCM, SecretBytes, SealBinding) {
        (
            try AESGCM(key: try MasterKeyFile.generate()), SecretBytes([UInt8](repeating: 0x42, count: size)),
            SealBinding(itemClass: .genericPassword, persistentRef: .random(), accessGroup: "bench")
        )
    }

    /// Runs `body` in rounds of 1,000 until `seconds` have passed; runs per second.
    private static func perSecond(for seconds: Double, _ body: () throws -> Void) rethrows -> Double {
        let start = Date()
        var count = 0
        while true {
            for _ in 0..<1000 { try body() }
            count += 1000
            let elapsed = Date().timeIntervalSince(start)
            if elapsed >= seconds { return Double(count) / elapsed }
        }
    }
}
