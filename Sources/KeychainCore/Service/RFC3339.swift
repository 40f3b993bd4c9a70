public import Foundation

/// RFC 3339 timestamps: parsed in any offset and precision, answered as UTC with milliseconds
/// (`2026-11-21T10:00:00.123Z`). Hand-written so that it is exact, locale-free and Sendable.
public enum RFC3339 {
    /// The answer form: UTC, always three fraction digits.
    public static func format(_ date: Date) -> String {
        format(millisecondsSince1970: date.millisecondsSince1970)
    }

    /// The same from milliseconds since 1970, written into one buffer (every answer and every
    /// audit line carries dates, so this avoids building the text piece by piece).
    public static func format(millisecondsSince1970 milliseconds: Int64) -> String {
        String(unsafeUninitializedCapacity: formattedLength) { buffer in
            write(millisecondsSince1970: milliseconds, into: UnsafeMutableBufferPointer(rebasing: buffer[..<formattedLength]))
            return formattedLength
        }
    }

    /// The length of the answer form (`2026-11-21T10:00:00.123Z`).
    public static let formattedLength = 24

    /// What four-digit years can say, in milliseconds since 1970: 0000-01-01T00:00:00.000Z
    /// through 9999-12-31T23:59:59.999Z. Nothing outside is parsed, nor written.
    public static let representable: ClosedRange<Int64> = -62_167_219_200_000...253_402_300_799_999

    /// Writes the answer form into `buffer`, which holds exactly `formattedLength` bytes. Pure
    /// arithmetic, no shared state: log and audit lines call it from every request thread. A
    /// date outside `representable` (only a database altered by hand holds one: every date
    /// keychaind stores is bounded) is written as its nearer end, never with its year cut to
    /// four digits, which made year 12026 read as 2026, in the past.
    public static func write(millisecondsSince1970 milliseconds: Int64, into buffer: UnsafeMutableBufferPointer<UInt8>) {
        precondition(buffer.count == formattedLength)
        let milliseconds = min(max(milliseconds, representable.lowerBound), representable.upperBound)
        var days = milliseconds / 86_400_000
        var rest = milliseconds % 86_400_000
        if rest < 0 {
            rest += 86_400_000
            days -= 1
        }
        let (year, month, day) = civil(fromDays: days)
        func put(_ value: Int64, at offset: Int, digits: Int, then separator: UInt8) {
            var value = value
            for index in stride(from: offset + digits - 1, through: offset, by: -1) {
                buffer[index] = UInt8(48 + value % 10)
                value /= 10
            }
            buffer[offset + digits] = separator
        }
        put(year, at: 0, digits: 4, then: UInt8(ascii: "-"))
        put(month, at: 5, digits: 2, then: UInt8(ascii: "-"))
        put(day, at: 8, digits: 2, then: UInt8(ascii: "T"))
        put(rest / 3_600_000, at: 11, digits: 2, then: UInt8(ascii: ":"))
        put(rest / 60_000 % 60, at: 14, digits: 2, then: UInt8(ascii: ":"))
        put(rest / 1000 % 60, at: 17, digits: 2, then: UInt8(ascii: "."))
        put(rest % 1000, at: 20, digits: 3, then: UInt8(ascii: "Z"))
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; fractions beyond milliseconds are cut.
    /// nil for a date whose offset takes it outside `representable` (`0000-01-01T00:00:00+01:00`).
    public static func parse(_ text: String) -> Date? {
        text.withUTF8Bytes { parse(utf8: $0) }
    }

    /// `parse` of UTF-8 bytes (every byte it accepts is ASCII).
    public static func parse(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var index = 0
        func number(_ digits: Int) -> Int64? {
            guard index + digits <= bytes.count else { return nil }
            var value: Int64 = 0
            for offset in 0..<digits {
                let byte = bytes[index + offset]
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            index += digits
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            expect("Tt "), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
            let second = number(2)
        else { return nil }
        var millisecond: Int64 = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                if digits < 3 { millisecond = millisecond * 10 + Int64(bytes[index] - 48) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 3) { millisecond *= 10 }
        }
        var offsetMinutes: Int64 = 0
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "Z") || bytes[index] == UInt8(ascii: "z") {
            index += 1
        } else {
            let sign: Int64 = bytes[index] == UInt8(ascii: "+") ? 1 : bytes[index] == UInt8(ascii: "-") ? -1 : 0
            guard sign != 0 else { return nil }
            index += 1
            guard let offsetHour = number(2), expect(":"), let offsetMinute = number(2), offsetHour < 24,
                offsetMinute < 60
            else { return nil }
            offsetMinutes = sign * (offsetHour * 60 + offsetMinute)
        }
        guard index == bytes.count, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            hour < 24, minute < 60, second < 61
        else { return nil }
        let days = self.days(fromCivil: year, month, day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offsetMinutes * 60
        guard representable.contains(seconds * 1000 + millisecond) else { return nil }
        return Date(millisecondsSince1970: seconds * 1000 + millisecond)
    }

    private static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days.
    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
