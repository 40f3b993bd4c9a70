import Foundation

/// A typed attribute value, as stored and matched. Enumerated attributes hold their canonical
/// JSON name as `.string` (`"https"`, `"whenUnlocked"`); dates are whole milliseconds.
public enum AttributeValue: Hashable, Sendable {
    case string(String)
    case data([UInt8])
    case integer(Int64)
    case bool(Bool)
    case date(Date)
}

extension AttributeValue {
    /// The default Apple gives a primary-key attribute left out on add (§2): empty strings and
    /// bytes, 0, false, and the 2001-01-01 reference date.
    public static func primaryKeyDefault(for type: Attribute.ValueType) -> AttributeValue {
        switch type {
        case .string: .string("")
        case .data: .data([])
        case .integer: .integer(0)
        case .bool: .bool(false)
        case .date: .date(Date(timeIntervalSinceReferenceDate: 0))
        case .enumeration(let enumeration): .string(enumeration.primaryKeyDefault)
        }
    }

    /// Two values match for a query: equality, or for strings, equality ignoring case when asked.
    public func matches(_ other: AttributeValue, caseInsensitive: Bool) -> Bool {
        if caseInsensitive, case .string(let a) = self, case .string(let b) = other {
            return a.lowercased() == b.lowercased()
        }
        return self == other
    }
}

extension Date {
    /// This date truncated to whole milliseconds, the precision keychaind keeps and answers.
    public var truncatedToMilliseconds: Date {
        Date(timeIntervalSince1970: (timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }

    /// Milliseconds since 1970, the stored form.
    public var millisecondsSince1970: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }

    public init(millisecondsSince1970: Int64) {
        self.init(timeIntervalSince1970: Double(millisecondsSince1970) / 1000)
    }
}
