import KeychainCore

/// Data keys wrapped under the master key (AES-256-GCM, AAD naming the term): nonce | ciphertext | tag.
extension Keyring {
    static func wrapAAD(term: UInt32) -> [UInt8] {
        var aad = Array("keychaind.keyring.term".utf8)
        SealedBox.appendUInt32(term, to: &aad)
        return aad
    }

    static func wrap(_ dataKey: SecretBytes, term: UInt32, kek: AESGCM) throws -> [UInt8] {
        var output: [UInt8] = []
        let nonce = try wrapAAD(term: term).withUnsafeBytes { aad in
            try dataKey.withUnsafeBytes { try kek.seal($0, aad: aad, appendingTo: &output) }
        }
        return nonce + output
    }

    static func unwrap(_ wrapped: [UInt8], term: UInt32, kek: AESGCM) throws -> SecretBytes {
        guard wrapped.count == AESGCM.nonceSize + 32 + AESGCM.tagSize else {
            throw CryptoError.invalidInput("wrapped key size")
        }
        let nonce = Array(wrapped[0..<12])
        let ciphertext = Array(wrapped[12..<44])
        let tag = Array(wrapped[44...])
        return try kek.open(ciphertext: ciphertext, tag: tag, nonce: nonce, aad: wrapAAD(term: term))
    }
}
