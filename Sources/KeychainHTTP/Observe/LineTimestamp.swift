#if canImport(Glibc)
import Glibc
#endif
import KeychainCore

/// The time of log and audit lines: RFC 3339, UTC, milliseconds (`2026-11-21T23:05:27.123Z`,
/// `RFC3339.format`'s form), appended straight to a line's bytes.
///
/// Formatted from the number on every line, with no state: a cached text of the current second
/// behind a lock (as this once was) cost more, because every request thread then wrote to the
/// same lock and array and the cores passed those cache lines back and forth (docs/benchmarks.md).
public enum LineTimestamp {
    /// Now, in milliseconds since 1970 (the real-time clock).
    public static func now() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    public static func append(millisecondsSince1970 milliseconds: Int64, to bytes: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: RFC3339.formattedLength) { text in
            RFC3339.write(millisecondsSince1970: milliseconds, into: text)
            bytes.append(contentsOf: UnsafeBufferPointer(text))
        }
    }
}

extension [UInt8] {
    /// `value` in decimal ASCII digits, without a `String` in between.
    mutating func appendDecimal(_ value: UInt64) {
        guard value >= 10 else {
            append(UInt8(48 + value))
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: UnsafeMutablePointer.maxDecimalLength) { digits in
            append(contentsOf: UnsafeBufferPointer(start: digits.baseAddress!, count: digits.baseAddress!.writeDecimal(value)))
        }
    }

    mutating func appendDecimal(_ value: Int64) {
        if value < 0 { append(UInt8(ascii: "-")) }
        appendDecimal(value.magnitude)
    }
}

extension UnsafeMutablePointer<UInt8> {
    /// The most bytes `writeDecimal` writes: `UInt64.max` has 20 digits, `Int64.min` a sign and 19.
    static var maxDecimalLength: Int { 20 }

    /// Writes `value` in decimal ASCII digits here; returns how many.
    func writeDecimal(_ value: UInt64) -> Int {
        var digits = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        rest = value
        for index in stride(from: digits - 1, through: 0, by: -1) {
            self[index] = UInt8(48 + rest % 10)
            rest /= 10
        }
        return digits
    }

    func writeDecimal(_ value: Int64) -> Int {
        guard value < 0 else { return writeDecimal(value.magnitude) }
        pointee = UInt8(ascii: "-")
        return 1 + (self + 1).writeDecimal(value.magnitude)
    }
}
