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

extension Array where Element == UInt8 {
    /// Appends `text`'s UTF-8, copied straight from the string's storage.
    @inlinable
    public mutating func appendUTF8(_ text: String) {
        text.withUTF8Bytes { append(contentsOf: $0) }
    }
}
