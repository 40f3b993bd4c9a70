/// Page cursors sealed to their query and caller (review finding 9). A cursor used to be the
/// global row sequence in clear (`v1:<seq>:`), so a tenant paging twice counted every other
/// tenant's writes in between. Now it reveals nothing and opens only for the query and client it
/// was given to: `base64url(tag ‖ position ⊕ pad)`, where `tag` is the first 16 bytes of
/// MAC(0x01 ‖ binding ‖ position), `pad` of MAC(0x02 ‖ tag), and the binding names the client and
/// every part of the query but the cursor (a synthetic-IV construction over HMAC-SHA-256 under a
/// key derived from the master key, as the audit tags'). A cursor from another query or client,
/// altered, or made under an earlier master key is errSecParam (docs/decisions.md, "Page cursors
/// are sealed").
public struct PageCursorSeal: Sendable {
    /// HMAC-SHA-256 of `message` into the 32 bytes of `mac`; false while no key is in memory
    /// (a locked vault).
    public typealias MAC = @Sendable (_ message: UnsafeRawBufferPointer, _ mac: UnsafeMutableRawBufferPointer) -> Bool

    private let mac: MAC

    public init(mac: @escaping MAC) { self.mac = mac }

    /// The HKDF label of the cursors' key (`Keyring.derivedMAC`).
    public static let keyLabel = "keychaind page cursor key v1"

    private static let tagBytes = 16
    private static let positionBytes = 16

    func seal(_ position: PagePosition, query: ItemQuery, client: Client) throws -> PageCursor {
        var plain: [UInt8] = []
        plain.reserveCapacity(Self.positionBytes)
        Self.append(UInt64(bitPattern: position.after.afterSequence), to: &plain)
        Self.append(UInt64(position.remaining ?? 0), to: &plain)
        let tag = try self.tag(plain, query: query, client: client)
        let pad = try self.pad(tag)
        let sealed = tag + zip(plain, pad).map { $0 ^ $1 }
        return PageCursor(token: sealed.withUnsafeBytes { Base64URL.encode($0) })
    }

    func open(_ cursor: PageCursor, query: ItemQuery, client: Client) throws -> PagePosition {
        guard let sealed = Base64URL.decode(cursor.token), sealed.count == Self.tagBytes + Self.positionBytes else {
            throw Self.refused
        }
        let tag = Array(sealed[..<Self.tagBytes])
        let plain = zip(sealed[Self.tagBytes...], try pad(tag)).map { $0 ^ $1 }
        let expected = try self.tag(plain, query: query, client: client)
        guard expected.withUnsafeBytes({ a in tag.withUnsafeBytes { b in constantTimeEqual(a, b) } }) else {
            throw Self.refused
        }
        let after = Int64(bitPattern: Self.number(plain[0..<8]))
        let remaining = Self.number(plain[8..<16])
        guard after >= 0, remaining <= UInt64(Int.max) else { throw Self.refused }
        return PagePosition(after: ItemCursor(afterSequence: after), remaining: remaining == 0 ? nil : Int(remaining))
    }

    private static let refused = KeychainError.param("\"cursor\" is not a cursor this server gave for this query")

    private func tag(_ plain: [UInt8], query: ItemQuery, client: Client) throws -> [UInt8] {
        var message: [UInt8] = [0x01]
        Self.appendBinding(query, client, to: &message)
        message += plain
        return Array(try mac(message).prefix(Self.tagBytes))
    }

    private func pad(_ tag: [UInt8]) throws -> [UInt8] {
        Array(try mac([0x02] + tag).prefix(Self.positionBytes))
    }

    private func mac(_ message: [UInt8]) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        let done = message.withUnsafeBytes { input in output.withUnsafeMutableBytes { mac(input, $0) } }
        guard done else { throw KeychainError.interactionNotAllowed() }
        return output
    }

    /// What a cursor is bound to: the client's name and the query but its cursor, each part
    /// length-prefixed, attributes in `Attribute.all`'s order.
    private static func appendBinding(_ query: ItemQuery, _ client: Client, to message: inout [UInt8]) {
        appendField(client.name.utf8, to: &message)
        appendField(query.itemClass.rawValue.utf8, to: &message)
        for attribute in Attribute.all {
            guard let value = query.attributes[attribute] else { continue }
            appendField(attribute.name.utf8, to: &message)
            switch value {
            case .string(let text): appendField([UInt8(ascii: "s")] + Array(text.utf8), to: &message)
            case .data(let bytes): appendField([UInt8(ascii: "d")] + bytes, to: &message)
            case .integer(let number): appendField("i\(number)".utf8, to: &message)
            case .bool(let flag): appendField(flag ? "b1".utf8 : "b0".utf8, to: &message)
            case .date(let date): appendField("t\(date.millisecondsSince1970)".utf8, to: &message)
            }
        }
        let synchronizable: String =
            switch query.synchronizable {
            case .nonSynchronizable: "n"
            case .synchronizable: "y"
            case .any: "a"
            }
        let limit: String =
            switch query.limit {
            case .one: "one"
            case .all: "all"
            case .count(let count): String(count)
            }
        let controls = "\(synchronizable)|\(query.caseInsensitive)|\(limit)|\(query.returnKinds.rawValue)|"
            + (query.persistentRef?.rawValue ?? "")
        appendField(controls.utf8, to: &message)
    }

    private static func appendField(_ bytes: some Collection<UInt8>, to message: inout [UInt8]) {
        append(UInt64(bytes.count), to: &message)
        message += bytes
    }

    private static func append(_ number: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: number >> UInt64(shift))) }
    }

    private static func number(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
