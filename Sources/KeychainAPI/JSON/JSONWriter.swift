public import Foundation
import KeychainCore

/// Writes one JSON text straight into bytes, member by member, in the order of the calls: the
/// writer of every answer and request body, and of `JSONValue.serialized()`. Nothing is built
/// first, so an answer costs one growing array (the token and item answers are hot paths).
///
/// `object` and `array` nest; a key is followed by exactly one value; commas are placed here.
public struct JSONWriter {
    public private(set) var bytes: [UInt8]
    /// Whether the next key or value at this level follows another one and needs a comma.
    private var afterValue = false

    /// `capacity`: the bytes the text is expected to take (more is grown into).
    public init(capacity: Int = 128) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The bytes of one object whose members `members` writes: an answer or a request body.
    public static func object(capacity: Int = 128, _ members: (inout JSONWriter) -> Void) -> [UInt8] {
        var writer = JSONWriter(capacity: capacity)
        writer.object(members)
        return writer.bytes
    }

    public mutating func object(_ members: (inout JSONWriter) -> Void) {
        openObject()
        members(&self)
        closeObject()
    }

    /// `{`; its members follow, then `closeObject()`. For the hot answers' writers: a closure
    /// that captured the answer would copy it (and count references to what it holds).
    public mutating func openObject() {
        open(UInt8(ascii: "{"))
    }

    public mutating func closeObject() {
        close(UInt8(ascii: "}"))
    }

    public mutating func array(_ elements: (inout JSONWriter) -> Void) {
        open(UInt8(ascii: "["))
        elements(&self)
        close(UInt8(ascii: "]"))
    }

    /// A member's key, plain ASCII known when the code is written (needs no escaping).
    public mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        afterValue = false
    }

    /// A member's key known only at run time (an attribute's name), escaped as any string.
    public mutating func key(_ name: String) {
        separate()
        JSONValue.writeString(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        afterValue = false
    }

    public mutating func string(_ value: String) {
        separate()
        JSONValue.writeString(value, to: &bytes)
        afterValue = true
    }

    /// A string given as UTF-8 bytes (valid UTF-8), written without making a `String` of them.
    public mutating func string(utf8 value: UnsafeBufferPointer<UInt8>) {
        separate()
        JSONValue.writeString(utf8: value, to: &bytes)
        afterValue = true
    }

    /// Bytes as a string of standard padded base64 (which never needs escaping).
    public mutating func base64(_ value: UnsafeRawBufferPointer) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        Base64.append(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
        afterValue = true
    }

    public mutating func base64(_ value: [UInt8]) {
        value.withUnsafeBytes { base64($0) }
    }

    /// A date as the answers spell it: RFC 3339, UTC, milliseconds.
    public mutating func date(_ value: Date) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: RFC3339.formattedLength))
        bytes.withUnsafeMutableBufferPointer { buffer in
            RFC3339.write(
                millisecondsSince1970: value.millisecondsSince1970,
                into: UnsafeMutableBufferPointer(rebasing: buffer[start..<(start + RFC3339.formattedLength)]))
        }
        bytes.append(UInt8(ascii: "\""))
        afterValue = true
    }

    /// A value already written as JSON text (a KV secret's stored data), copied as it is.
    public mutating func rawJSON(_ text: UnsafeRawBufferPointer) {
        separate()
        bytes.append(contentsOf: text)
        afterValue = true
    }

    public mutating func integer(_ value: Int64) {
        separate()
        bytes.appendUTF8(String(value))
        afterValue = true
    }

    /// A number; whole values below 10^15 are written without a fraction, as integers are.
    public mutating func number(_ value: Double) {
        separate()
        if value.rounded() == value, abs(value) < 1e15 {
            bytes.appendUTF8(String(Int64(value)))
        } else {
            bytes.appendUTF8("\(value)")
        }
        afterValue = true
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
        afterValue = true
    }

    public mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
        afterValue = true
    }

    /// A member whose name is known when the code is written, and its value.
    public mutating func member(_ name: StaticString, _ value: String) {
        key(name)
        string(value)
    }

    public mutating func member(_ name: StaticString, _ value: Int64) {
        key(name)
        integer(value)
    }

    public mutating func member(_ name: StaticString, _ value: Int) {
        member(name, Int64(value))
    }

    public mutating func member(_ name: StaticString, _ value: Bool) {
        key(name)
        bool(value)
    }

    /// The value, or `null`.
    public mutating func member(_ name: StaticString, _ value: String?) {
        key(name)
        if let value { string(value) } else { null() }
    }

    /// The date as answers spell it, or `null`.
    public mutating func member(_ name: StaticString, _ value: Date?) {
        key(name)
        if let value { date(value) } else { null() }
    }

    /// Any JSON value, members in their order.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .integer(let whole): integer(whole)
        case .number(let real): number(real)
        case .string(let text): string(text)
        case .array(let elements):
            array { writer in
                for element in elements { writer.value(element) }
            }
        case .object(let members):
            object { writer in
                for (name, member) in members {
                    writer.key(name)
                    writer.value(member)
                }
            }
        }
    }

    private mutating func separate() {
        if afterValue { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        afterValue = false
    }

    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        afterValue = true
    }
}
