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

    static func append(millisecondsSince1970 milliseconds: Int64, to bytes: inout [UInt8]) {
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
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in  // UInt64.max has 20
            var value = value
            var index = digits.count
            while value > 0 {
                index -= 1
                digits[index] = UInt8(48 + value % 10)
                value /= 10
            }
            append(contentsOf: UnsafeBufferPointer(rebasing: digits[index...]))
        }
    }

    mutating func appendDecimal(_ value: Int64) {
        if value < 0 { append(UInt8(ascii: "-")) }
        appendDecimal(value.magnitude)
    }
}
