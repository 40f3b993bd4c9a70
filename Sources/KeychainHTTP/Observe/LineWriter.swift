import KeychainAPI
import KeychainCore

/// Writes one JSON object as a line, `{"key":value,...}\n`, in two passes over the same fields:
/// a measuring writer (`LineWriter()`) adds up the most bytes each field can take, then a writer
/// over memory of that size (`init(writingTo:)`) writes them, with no check per byte. (Appending
/// to an `Array` checked its uniqueness and room for every byte, and the line was one more
/// allocation: ~6k instructions per audit line, docs/benchmarks.md.) A field that would pass the
/// measured size stops the process rather than write past it.
struct LineWriter {
    /// Nil while measuring.
    private let output: UnsafeMutablePointer<UInt8>?
    private let capacity: Int
    /// Measuring: the most bytes of the fields so far. Writing: the bytes written.
    private var count: Int

    /// A measuring writer.
    init() {
        output = nil
        capacity = .max
        count = 1  // "{"
    }

    /// A writing writer, for the fields a measuring one measured, into `memory` of its
    /// `lineCapacity`.
    init(writingTo memory: UnsafeMutableBufferPointer<UInt8>) {
        output = memory.baseAddress!
        capacity = memory.count
        memory[0] = UInt8(ascii: "{")
        count = 1
    }

    /// The bytes the measured fields take at most, with the line's end.
    var lineCapacity: Int {
        precondition(output == nil, "only a measuring writer sizes a line")
        return count + 2  // "}\n"
    }

    /// Ends the line; its bytes.
    mutating func finish() -> UnsafeBufferPointer<UInt8> {
        let end = room(2)!
        end[0] = UInt8(ascii: "}")
        end[1] = 0x0A
        count += 2
        return UnsafeBufferPointer(start: output, count: count)
    }

    /// Where the next field's at most `bound` bytes go; nil while measuring (which counts them).
    private mutating func room(_ bound: Int) -> UnsafeMutablePointer<UInt8>? {
        guard let output else {
            count += bound
            return nil
        }
        precondition(count + bound <= capacity, "a line's fields differ from the fields it was measured with")
        return output + count
    }

    /// `key` is one of the entry's field names: plain ASCII literals, so written without escaping.
    private mutating func key(_ key: StaticString) {
        guard var position = room(key.utf8CodeUnitCount + 4) else { return }
        let start = position
        if count > 1 {
            position.pointee = UInt8(ascii: ",")
            position += 1
        }
        position.pointee = UInt8(ascii: "\"")
        (position + 1).update(from: key.utf8Start, count: key.utf8CodeUnitCount)
        position += 1 + key.utf8CodeUnitCount
        position[0] = UInt8(ascii: "\"")
        position[1] = UInt8(ascii: ":")
        count += position + 2 - start
    }

    mutating func string(_ name: StaticString, _ value: String) {
        key(name)
        guard let position = room(JSONValue.maxStringLength(value)) else { return }
        count += JSONValue.writeString(value, into: position)
    }

    /// RFC 3339, UTC, milliseconds.
    mutating func time(_ name: StaticString, millisecondsSince1970 milliseconds: Int64) {
        key(name)
        guard let position = room(RFC3339.formattedLength + 2) else { return }
        position.pointee = UInt8(ascii: "\"")
        RFC3339.write(
            millisecondsSince1970: milliseconds,
            into: UnsafeMutableBufferPointer(start: position + 1, count: RFC3339.formattedLength))
        position[RFC3339.formattedLength + 1] = UInt8(ascii: "\"")
        count += RFC3339.formattedLength + 2
    }

    mutating func integer(_ name: StaticString, _ value: Int64) {
        key(name)
        guard let position = room(UnsafeMutablePointer.maxDecimalLength) else { return }
        count += position.writeDecimal(value)
    }

    /// Microseconds as a number of milliseconds, as Swift prints the `Double` (`0.042`, `1.25`,
    /// `3.0`): a whole part, then the fraction without trailing zeros, at least one digit.
    mutating func milliseconds(_ name: StaticString, microseconds: UInt64) {
        key(name)
        guard var position = room(UnsafeMutablePointer.maxDecimalLength + 4) else { return }
        let start = position
        position += position.writeDecimal(microseconds / 1000)
        position.pointee = UInt8(ascii: ".")
        let fraction = microseconds % 1000
        position[1] = UInt8(48 + fraction / 100)
        position += 2
        if fraction % 100 != 0 {
            position.pointee = UInt8(48 + fraction / 10 % 10)
            position += 1
            if fraction % 10 != 0 {
                position.pointee = UInt8(48 + fraction % 10)
                position += 1
            }
        }
        count += position - start
    }

    mutating func null(_ name: StaticString) {
        key(name)
        guard let position = room(4) else { return }
        position.update(from: ("null" as StaticString).utf8Start, count: 4)
        count += 4
    }

    mutating func object(_ name: StaticString, _ members: [(String, String)]) {
        key(name)
        var bound = 2
        for (key, value) in members { bound += JSONValue.maxStringLength(key) + JSONValue.maxStringLength(value) + 2 }
        guard var position = room(bound) else { return }
        let start = position
        position.pointee = UInt8(ascii: "{")
        position += 1
        for index in members.indices {
            if index > 0 {
                position.pointee = UInt8(ascii: ",")
                position += 1
            }
            position += JSONValue.writeString(members[index].0, into: position)
            position.pointee = UInt8(ascii: ":")
            position += 1
            position += JSONValue.writeString(members[index].1, into: position)
        }
        position.pointee = UInt8(ascii: "}")
        count += position + 1 - start
    }
}
