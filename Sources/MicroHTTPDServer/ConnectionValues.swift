internal import CMicroHTTPD
import KeychainCore

/// Collects the (name, value) pairs of one kind (headers or query arguments), each with its
/// length (so a decoded `%00` stays in the value). `strict`: nil when a name or value is not
/// UTF-8; otherwise such bytes are repaired (U+FFFD). `lowercasingNames`: ASCII letters of
/// names are lower-cased as they are copied (header names are case-insensitive).
/// `percentDecoding`: names and values are percent-decoded as they are copied, as
/// libmicrohttpd's own unescape callback would have (`MHD_http_unescape`; keychaind's leaves
/// every string as sent, so that the path reaches the router undecoded).
func values(
    of connection: OpaquePointer, kind: MHD_ValueKind, strict: Bool, lowercasingNames: Bool,
    percentDecoding: Bool = false
) -> [(name: String, value: String)]? {
    struct Collector {
        var pairs: [(name: String, value: String)] = []
        let strict: Bool
        let lowercasingNames: Bool
        let percentDecoding: Bool
        var invalid = false

        mutating func text(_ pointer: UnsafePointer<CChar>?, _ count: Int, lowercasing: Bool) -> String {
            guard let pointer, count > 0 else { return "" }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: count)
            if percentDecoding, bytes.contains(UInt8(ascii: "%")) {
                return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count + 1) { copy in
                    _ = UnsafeMutableBufferPointer(rebasing: copy[..<count]).initialize(fromContentsOf: bytes)
                    copy[count] = 0
                    let decoded = copy.withMemoryRebound(to: CChar.self) { MHD_http_unescape($0.baseAddress!) }
                    return text(UnsafeBufferPointer(rebasing: copy[..<decoded]), lowercasing: lowercasing)
                }
            }
            return text(bytes, lowercasing: lowercasing)
        }

        private mutating func text(_ bytes: UnsafeBufferPointer<UInt8>, lowercasing: Bool) -> String {
            let count = bytes.count
            if strict {
                guard let valid = String(validatingUTF8Bytes: bytes) else {
                    invalid = true
                    return ""
                }
                return valid
            }
            guard lowercasing else { return String(decoding: bytes, as: UTF8.self) }
            // Repairs ill-formed UTF-8 like `String(decoding:)`.
            return String(unsafeUninitializedCapacity: count) { copy in
                for index in 0..<count {
                    let byte = bytes[index]
                    copy[index] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                }
                return count
            }
        }
    }
    // Counted first (no callback): most requests have no query, and then nothing is allocated.
    let count = Int(MHD_get_connection_values_n(connection, kind, nil, nil))
    guard count > 0 else { return [] }
    var collector = Collector(strict: strict, lowercasingNames: lowercasingNames, percentDecoding: percentDecoding)
    collector.pairs.reserveCapacity(count)
    withUnsafeMutablePointer(to: &collector) { collector in
        _ = MHD_get_connection_values_n(connection, kind, { context, _, key, keySize, value, valueSize in
            guard let context, let key else { return .YES }
            let collector = context.assumingMemoryBound(to: Collector.self)
            let name = collector.pointee.text(key, keySize, lowercasing: collector.pointee.lowercasingNames)
            let value = collector.pointee.text(value, valueSize, lowercasing: false)
            collector.pointee.pairs.append((name, value))
            return collector.pointee.invalid ? .NO : .YES
        }, collector)
    }
    return collector.invalid ? nil : collector.pairs
}
