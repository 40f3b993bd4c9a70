public import Foundation

/// A `Retry-After` header's value (RFC 9110 §10.2.3) as seconds to wait from the moment the answer
/// arrived: delay-seconds, or an HTTP-date in any of the three forms a recipient must accept
/// (IMF-fixdate, RFC 850, asctime). A value that is neither, or a date not after the answer, asks
/// for no wait and is ignored (docs/api.md, "Keeping tokens fresh").
public enum RetryAfter {
    /// Whole seconds (1 or more) to wait after `receivedAt`; nil when `value` is unparsable, zero
    /// or in the past. A date's fraction of a second rounds up: never earlier than asked.
    public static func seconds(_ value: String, receivedAt: Date) -> Int64? {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            // Too many digits to count is a very long wait: the cap decides how long.
            let seconds = Int64(text) ?? Int64.max
            return seconds > 0 ? seconds : nil
        }
        guard let date = httpDate(text) else { return nil }
        let wait = date.timeIntervalSince(receivedAt).rounded(.up)
        return wait >= 1 ? Int64(min(wait, Double(Int32.max))) : nil
    }

    /// The three forms of RFC 9110 §5.6.7, always in GMT.
    private static let formats = ["EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy"]

    static func httpDate(_ text: String) -> Date? {
        // asctime pads a one-digit day with a space: "Sun Nov  6 08:49:37 1994".
        let single = text.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        for format in formats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.isLenient = false
            formatter.dateFormat = format
            if let date = formatter.date(from: format.hasPrefix("EEE MMM") ? single : text) { return date }
        }
        return nil
    }
}
