public import KeychainCore

/// A lifetime in whole seconds, as the token routes take it: a JSON integer, or (where Vault's
/// clients send one) a duration text such as `"30m"`, `"1h30m"`, `"45s"`, `"2d"` or `"90"`.
/// At least one second and at most ten years, so that no sum with a date overflows.
public enum DurationSeconds {
    public static let maximum: Int64 = 10 * 365 * 86_400

    public static func parse(_ value: JSONValue, key: String, allowText: Bool = true) throws -> Int64 {
        let seconds: Int64?
        switch value {
        case .integer(let number): seconds = number
        case .string(let text) where allowText: seconds = parse(text)
        default: seconds = nil
        }
        guard let seconds, seconds >= 1, seconds <= maximum else {
            throw KeychainError.param(
                allowText
                    ? "\"\(key)\" must be a number of seconds or a duration such as \"30m\" (1 second to 10 years)"
                    : "\"\(key)\" must be a whole number of seconds, 1 to \(maximum)")
        }
        return seconds
    }

    /// The seconds of a duration text, nil when it is not one (or overflows).
    static func parse(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 32 else { return nil }
        if bytes.allSatisfy({ (48...57).contains($0) }) { return Int64(text) }
        var total: Int64 = 0
        var index = 0
        while index < bytes.count {
            var number: Int64 = 0
            let start = index
            while index < bytes.count, (48...57).contains(bytes[index]) {
                let (product, overflowed) = number.multipliedReportingOverflow(by: 10)
                guard !overflowed else { return nil }
                number = product + Int64(bytes[index] - 48)
                index += 1
            }
            guard index > start, index < bytes.count else { return nil }
            let unit: Int64 = switch bytes[index] {
            case UInt8(ascii: "s"): 1
            case UInt8(ascii: "m"): 60
            case UInt8(ascii: "h"): 3600
            case UInt8(ascii: "d"): 86_400
            default: 0
            }
            guard unit > 0 else { return nil }
            index += 1
            let (part, overflowed) = number.multipliedReportingOverflow(by: unit)
            guard !overflowed else { return nil }
            let (sum, overflowedSum) = total.addingReportingOverflow(part)
            guard !overflowedSum else { return nil }
            total = sum
        }
        return total
    }
}
