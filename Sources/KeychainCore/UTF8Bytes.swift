#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension String {
    /// Runs `body` over the string's UTF-8 where it lies. Unlike `withUTF8`, which needs a
    /// `var` (a copy, so one more reference counted and released), this borrows the string.
    @inlinable
    public func withUTF8Bytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = self
        return try copy.withUTF8(body)
    }
}

extension String {
    /// Whether both strings hold the same UTF-8 bytes. Names that decide access (access groups,
    /// client names) and stored values compare this way, as SQLite and the sealing AAD do: Swift's
    /// `==` holds canonically equivalent spellings equal (`café` in NFC and in NFD, `K` and the
    /// Kelvin sign), which would let one name stand for another.
    @inlinable
    public func hasSameUTF8(as other: String) -> Bool {
        withUTF8Bytes { mine in other.withUTF8Bytes { theirs in sameBytes(mine, theirs) } }
    }
}

/// Whether both buffers hold the same bytes, by `memcmp`: `elementsEqual` walks them through
/// iterators a byte at a time, ~100 instructions for a short name (callgrind), and a find-cache
/// hit compares several (the filter's access groups and attribute values).
@usableFromInline
func sameBytes(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
    guard lhs.count == rhs.count else { return false }
    guard let left = lhs.baseAddress, let right = rhs.baseAddress else { return true }
    return memcmp(left, right, lhs.count) == 0
}

extension Sequence<String> {
    /// Whether one of the names has exactly `name`'s UTF-8 bytes (`String.hasSameUTF8(as:)`).
    @inlinable
    public func containsExactly(_ name: String) -> Bool {
        contains { $0.hasSameUTF8(as: name) }
    }
}

extension Array where Element == UInt8 {
    /// Appends `text`'s UTF-8, copied straight from the string's storage.
    @inlinable
    public mutating func appendUTF8(_ text: String) {
        text.withUTF8Bytes { append(contentsOf: $0) }
    }
}

extension String {
    /// The bytes as a string when they are valid UTF-8, else nil, as `String(validating:as:)`
    /// answers; ASCII (nearly every query name and value, JSON string and token) is made
    /// directly. The generic initializer, not specialized for UTF-8 in the standard library,
    /// looked up type metadata on every call: ~1.2k instructions each, six per item read for its
    /// query's names and values (callgrind).
    @inlinable
    public init?(validatingUTF8Bytes bytes: UnsafeBufferPointer<UInt8>) {
        guard String.isValidUTF8(bytes) else { return nil }
        self = String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `bytes` are valid UTF-8; ASCII is known valid without decoding.
    @inlinable
    public static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.allSatisfy { $0 < 0x80 } || String(validating: bytes, as: UTF8.self) != nil
    }
}
