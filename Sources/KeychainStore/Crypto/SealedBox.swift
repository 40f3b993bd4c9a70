package import KeychainCore

/// The row a sealed value belongs to: an item's secret (its class, persistent reference and
/// access group), a KV version's data (its group, path and number), a KV secret's custom
/// metadata (its group and path) or an OAuth provider's client secret (its name). Moving a box to another row (or changing the row's group
/// without re-sealing) makes it fail to open. `package`, like `SealedBox` and `AESGCM`, for
/// StorageBench's crypto loop.
package enum SealBinding: Equatable {
    case item(ItemClass, PersistentRef, accessGroup: String)
    case kvVersion(KVSecretKey, number: Int)
    case kvCustomMetadata(KVSecretKey)
    case providerClientSecret(provider: String)
    /// A connect session's PKCE verifier, bound to its `connectId`.
    case connectVerifier(connectId: String)
    /// A webhook's signing key, bound to its name.
    case webhookSecret(String)

    package init(itemClass: ItemClass, persistentRef: PersistentRef, accessGroup: String) {
        self = .item(itemClass, persistentRef, accessGroup: accessGroup)
    }

    /// The AAD's label, one per table, so that no two tables' bindings share an encoding.
    fileprivate var label: StaticString {
        switch self {
        case .item: "keychaind.item"
        case .kvVersion: "keychaind.kv_versions"
        case .kvCustomMetadata: "keychaind.kv_secrets"
        case .providerClientSecret: "keychaind.oauth_providers"
        case .connectVerifier: "keychaind.connect_sessions"
        case .webhookSecret: "keychaind.webhooks"
        }
    }

    /// What names the row, for a log line about a box that fails to open (no secret in it).
    package var logMetadata: [String: String] {
        switch self {
        case .item(let itemClass, let ref, _): ["class": itemClass.rawValue, "persistentRef": ref.rawValue]
        case .kvVersion(let key, let number): ["kvSecret": key.description, "version": "\(number)"]
        case .kvCustomMetadata(let key): ["kvSecret": key.description, "customMetadata": "true"]
        case .providerClientSecret(let name): ["provider": name, "clientSecret": "true"]
        case .connectVerifier(let id): ["connectId": id]
        case .webhookSecret(let name): ["webhook": name]
        }
    }
}

/// The stored form of a sealed value (an item's secret, a KV version's data, a KV secret's
/// custom metadata): `version (1 byte = 1) | term (UInt32 big-endian) | nonce (12) | ciphertext | tag (16)`.
///
/// The AAD is `label | version | term | row fields`: for an item `"keychaind.item"`, then its
/// class code, persistentRef and access group; for a KV version `"keychaind.kv_versions"`, then
/// its group, path and number (decimal); for KV custom metadata `"keychaind.kv_secrets"`, then
/// its group and path; for a provider's client secret `"keychaind.oauth_providers"`, then its
/// name and `client_secret` (the column); for a connect session's verifier
/// `"keychaind.connect_sessions"`, then its `connectId` and `"verifier"`; for a webhook's key
/// `"keychaind.webhooks"`, then its name and an empty field. Each variable field is prefixed with
/// its UInt32 big-endian length, so no two bindings share an encoding.
package enum SealedBox {
    static let version: UInt8 = 1
    static let headerSize = 1 + 4 + AESGCM.nonceSize
    static let overhead = headerSize + AESGCM.tagSize

    /// Runs `body` with the AAD of a box. Written straight into a temporary buffer (on the stack
    /// unless the fields are long): every secret opened needs it.
    static func withAAD<Result>(
        version: UInt8, term: UInt32, binding: SealBinding, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) rethrows -> Result {
        switch binding {
        case .item(let itemClass, let ref, let group):
            return try withAAD(
                label: binding.label, version: version, term: term, itemClass.code.utf8, ref.rawValue.utf8, group.utf8, body)
        case .kvVersion(let key, let number):
            // A decimal of at most 20 digits: a small string, no allocation.
            return try withAAD(
                label: binding.label, version: version, term: term, key.group.utf8, key.path.utf8, String(number).utf8, body)
        case .kvCustomMetadata(let key):
            return try withAAD(label: binding.label, version: version, term: term, key.group.utf8, key.path.utf8, nil, body)
        case .providerClientSecret(let name):
            return try withAAD(label: binding.label, version: version, term: term, name.utf8, "client_secret".utf8, nil, body)
        case .connectVerifier(let id):
            return try withAAD(label: binding.label, version: version, term: term, id.utf8, "verifier".utf8, nil, body)
        case .webhookSecret(let name):
            return try withAAD(label: binding.label, version: version, term: term, name.utf8, "".utf8, nil, body)
        }
    }

    /// The AAD of a box bound to the fields `first`, `second` and, when given, `third`.
    private static func withAAD<Result>(
        label: StaticString, version: UInt8, term: UInt32, _ first: String.UTF8View, _ second: String.UTF8View,
        _ third: String.UTF8View?, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) rethrows -> Result {
        let labelBytes = UnsafeRawBufferPointer(start: label.utf8Start, count: label.utf8CodeUnitCount)
        let size = 4 + labelBytes.count + 1 + 4 + 4 + first.count + 4 + second.count + (third.map { 4 + $0.count } ?? 0)
        return try withUnsafeTemporaryAllocation(byteCount: size, alignment: 1) { buffer in
            var offset = 0
            func put(_ value: UInt32) {
                buffer[offset] = UInt8(truncatingIfNeeded: value >> 24)
                buffer[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
                buffer[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
                buffer[offset + 3] = UInt8(truncatingIfNeeded: value)
                offset += 4
            }
            func put<Field: Collection<UInt8>>(field: Field) {
                put(UInt32(field.count))
                UnsafeMutableRawBufferPointer(rebasing: buffer[offset...]).copyBytes(from: field)
                offset += field.count
            }
            put(field: labelBytes)
            buffer[offset] = version
            offset += 1
            put(term)
            put(field: first)
            put(field: second)
            if let third { put(field: third) }
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
