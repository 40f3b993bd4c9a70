#if canImport(Glibc)
import Glibc
#endif
import KeychainCore

/// The time of log and audit lines: RFC 3339, UTC, milliseconds (`2026-11-21T23:05:27.123Z`,
/// `RFC3339.format`'s form), appended straight to a line's bytes. The text up to the second is
/// formatted once a second and kept; a line writes only its milliseconds.
public final class LineTimestamp: Sendable {
    /// The second last written and its text up to the milliseconds (`2026-11-21T23:05:27.`).
    private let current = PThreadLocked<(second: Int64, text: [UInt8])>((.min, []))

    init() {}

    /// Now, in milliseconds since 1970 (the real-time clock).
    public static func now() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    func append(millisecondsSince1970 milliseconds: Int64, to bytes: inout [UInt8]) {
        var second = milliseconds / 1000
        var millisecond = milliseconds % 1000
        if millisecond < 0 {
            second -= 1
            millisecond += 1000
        }
        current.withLock { current in
            if current.second != second {
                current = (second, Array(RFC3339.format(millisecondsSince1970: second * 1000).utf8.dropLast(4)))
            }
            bytes.append(contentsOf: current.text)
        }
        bytes.append(UInt8(48 + millisecond / 100))
        bytes.append(UInt8(48 + millisecond / 10 % 10))
        bytes.append(UInt8(48 + millisecond % 10))
        bytes.append(UInt8(ascii: "Z"))
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
