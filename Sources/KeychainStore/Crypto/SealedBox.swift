package import KeychainCore

/// What a sealed secret is bound to: its class, persistent reference and access group. Moving a
/// box to another row (or changing the row's group without re-sealing) makes it fail to open.
/// `package`, like `SealedBox` and `AESGCM`, for StorageBench's crypto loop.
package struct SealBinding: Equatable {
    let itemClass: ItemClass
    let persistentRef: PersistentRef
    let accessGroup: String

    package init(itemClass: ItemClass, persistentRef: PersistentRef, accessGroup: String) {
        self.itemClass = itemClass
        self.persistentRef = persistentRef
        self.accessGroup = accessGroup
    }
}

/// The stored form of an item's secret:
/// `version (1 byte = 1) | term (UInt32 big-endian) | nonce (12) | ciphertext | tag (16)`.
///
/// The AAD is `"keychaind.item" | version | term | class code | persistentRef | access group`,
/// each variable field prefixed with its UInt32 big-endian length, so no two bindings share
/// an encoding.
package enum SealedBox {
    static let version: UInt8 = 1
    static let headerSize = 1 + 4 + AESGCM.nonceSize
    static let overhead = headerSize + AESGCM.tagSize

    /// Runs `body` with the AAD of a box. Written straight into a temporary buffer (on the stack
    /// unless the access group is long): every secret opened needs it.
    static func withAAD<Result>(
        version: UInt8, term: UInt32, binding: SealBinding, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) rethrows -> Result {
        let label = "keychaind.item".utf8, code = binding.itemClass.code.utf8
        let ref = binding.persistentRef.rawValue.utf8, group = binding.accessGroup.utf8
        let size = 4 + label.count + 1 + 4 + 4 + code.count + 4 + ref.count + 4 + group.count
        return try withUnsafeTemporaryAllocation(byteCount: size, alignment: 1) { buffer in
            var offset = 0
            func put(_ value: UInt32) {
                buffer[offset] = UInt8(truncatingIfNeeded: value >> 24)
                buffer[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
                buffer[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
                buffer[offset + 3] = UInt8(truncatingIfNeeded: value)
                offset += 4
            }
            func put(field: String.UTF8View) {
                put(UInt32(field.count))
                UnsafeMutableRawBufferPointer(rebasing: buffer[offset...]).copyBytes(from: field)
                offset += field.count
            }
            put(field: label)
            buffer[offset] = version
            offset += 1
            put(term)
            put(field: code)
            put(field: ref)
            put(field: group)
            return try body(UnsafeRawBufferPointer(buffer))
        }
    }

    package static func seal(_ secret: SecretBytes, term: UInt32, cipher: AESGCM, binding: SealBinding) throws -> [UInt8] {
        var box: [UInt8] = []
        box.reserveCapacity(overhead + secret.count)
        box.append(version)
        appendUInt32(term, to: &box)
        let nonce = try SecureRandom.bytes(AESGCM.nonceSize)
        box.append(contentsOf: nonce)
        try withAAD(version: version, term: term, binding: binding) { aad in
            try secret.withUnsafeBytes { plaintext in
                _ = try cipher.seal(plaintext, nonce: nonce, aad: aad, appendingTo: &box)
            }
        }
        return box
    }

    /// The header fields of a box, or `CryptoError.invalidInput` when it is too short or of another version.
    static func header(of box: [UInt8]) throws -> (version: UInt8, term: UInt32) {
        guard box.count >= overhead else { throw CryptoError.invalidInput("sealed box too short") }
        guard box[0] == version else { throw CryptoError.invalidInput("unknown sealed box version \(box[0])") }
        let term = UInt32(box[1]) << 24 | UInt32(box[2]) << 16 | UInt32(box[3]) << 8 | UInt32(box[4])
        return (box[0], term)
    }

    package static func open(_ box: [UInt8], cipher: AESGCM, binding: SealBinding) throws -> SecretBytes {
        let (version, term) = try header(of: box)
        return try withAAD(version: version, term: term, binding: binding) { aad in
            try box.withUnsafeBytes { raw in
                let nonce = UnsafeRawBufferPointer(rebasing: raw[5..<headerSize])
                let ciphertext = UnsafeRawBufferPointer(rebasing: raw[headerSize..<(raw.count - AESGCM.tagSize)])
                let tag = UnsafeRawBufferPointer(rebasing: raw[(raw.count - AESGCM.tagSize)...])
                // An item's secret only passes through on its way into an answer: wiped when released,
                // but not mlock'ed (an mlock/munlock pair per read splits the heap's memory mappings
                // and serialises every worker thread on the kernel's mapping lock).
                return try cipher.open(ciphertext: ciphertext, tag: tag, nonce: nonce, aad: aad, lockedInMemory: false)
            }
        }
    }

    /// Where the term lies in a box, for the backends' SQL that selects secrets by term:
    /// `termLength` bytes from byte `termStart` (counted from 1, as SQL's substr counts),
    /// big-endian, so that comparing them byte-wise orders terms (`termKey`).
    package static let termStart = 2
    package static let termLength = 4

    /// A term as a box holds it, to compare with the box's bytes at `termStart`.
    package static func termKey(_ term: UInt32) -> [UInt8] {
        var bytes: [UInt8] = []
        appendUInt32(term, to: &bytes)
        return bytes
    }

    package static func appendUInt32(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 24))
        bytes.append(UInt8(truncatingIfNeeded: value >> 16))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }
}
