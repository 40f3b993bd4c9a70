public import Foundation

/// A typed attribute value, as stored and matched. Enumerated attributes hold their canonical
/// JSON name as `.string` (`"https"`, `"whenUnlocked"`); dates are whole milliseconds.
public enum AttributeValue: Hashable, Sendable {
    case string(String)
    case data([UInt8])
    case integer(Int64)
    case bool(Bool)
    case date(Date)

    /// Strings are equal when their UTF-8 bytes are (as SQLite compares them), not by Swift's
    /// canonical equivalence; the synthesized hash stays consistent with that (equal bytes, equal hash).
    public static func == (lhs: AttributeValue, rhs: AttributeValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): a.hasSameUTF8(as: b)
        case (.data(let a), .data(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.date(let a), .date(let b)): a == b
        default: false
        }
    }
}

extension AttributeValue {
    /// The most bytes one string or data value may hold (`storedBytes`), on add and update:
    /// attributes are searchable metadata, not a second place for secrets, and without a bound
    /// a 1 MB `comment` went past every quota (docs/decisions.md, "Attribute values are bounded").
    public static let maximumBytes = 4096

    /// What the value counts for in a group's stored bytes (`GroupQuota.attributeBytes`) and in a
    /// page's bytes: a string's UTF-8 bytes, data's bytes, 8 for a number, flag or date. The
    /// one definition of an attribute's size; the stores' migrations recount it in SQL.
    public var storedBytes: Int {
        switch self {
        case .string(let text): text.utf8.count
        case .data(let bytes): bytes.count
        case .integer, .bool, .date: 8
        }
    }

    /// `storedBytes` of every value of an item's attributes.
    public static func storedBytes(of attributes: [Attribute: AttributeValue]) -> Int {
        attributes.values.reduce(0) { $0 + $1.storedBytes }
    }

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
    public var truncatedToMilliseconds: Date { Date(millisecondsSince1970: millisecondsSince1970) }

    /// Milliseconds since 1970, the stored form: truncated toward the earlier millisecond, except
    /// that a value within a microsecond of a whole millisecond is that millisecond: `Date` keeps
    /// seconds since 2001 in a `Double`, whose rounding near 1970 is ~0.1 µs, so a plain floor made
    /// -0.001 s into -2 ms. Saturating: a date beyond Int64's milliseconds is the nearest bound.
    public var millisecondsSince1970: Int64 {
        let scaled = timeIntervalSince1970 * 1000
        let nearest = scaled.rounded()
        return Int64(saturating: abs(scaled - nearest) < 1e-3 ? nearest : scaled.rounded(.down))
    }

    public init(millisecondsSince1970: Int64) {
        self.init(timeIntervalSince1970: Double(millisecondsSince1970) / 1000)
    }
}
