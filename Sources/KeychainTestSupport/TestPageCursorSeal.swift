public import KeychainCore

extension PageCursorSeal {
    /// A seal for in-process tests, keyed per process: Swift's `Hasher` (SipHash, seeded at
    /// random at start) stands in for HMAC-SHA-256, which Core cannot reach. Not a MAC to rely
    /// on; the server's seal is `Keyring.derivedMAC`.
    public static let forTests = PageCursorSeal { message, mac in
        for block in 0..<4 {
            var hasher = Hasher()
            hasher.combine(block)
            hasher.combine(bytes: message)
            withUnsafeBytes(of: hasher.finalize()) { bytes in
                for index in 0..<8 { mac[block * 8 + index] = bytes[index] }
            }
        }
        return true
    }
}
