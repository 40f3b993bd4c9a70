import KeychainCore

extension JSONValue {
    /// The compact JSON text of this value, UTF-8.
    public func serialized() -> [UInt8] {
        var writer = JSONWriter()
        writer.value(self)
        return writer.bytes
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// `string` as a JSON string literal: `"`, `\` and control characters escaped; runs of
    /// bytes that need no escape are copied whole (every answer and log line goes through here).
    public static func writeString(_ string: String, to output: inout [UInt8]) {
        string.withUTF8Bytes { writeString(utf8: $0, to: &output) }
    }

    /// The same for a string given as its (valid) UTF-8 bytes.
    public static func writeString(utf8: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        forEachRun(of: utf8) { run, escaped in
            output.append(contentsOf: run)
            if let escaped { escape(escaped) { output.append(contentsOf: $0) } }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// The most bytes `writeString(_:into:)` writes for `string`: its quotes, and every byte
    /// escaped as `\u00XX`.
    public static func maxStringLength(_ string: String) -> Int { 2 + 6 * string.utf8.count }

    /// `string` as a JSON string literal at `output`, which has room for `maxStringLength(string)`
    /// bytes; returns the bytes written. For lines sized before they are written (the audit log).
    public static func writeString(_ string: String, into output: UnsafeMutablePointer<UInt8>) -> Int {
        var position = output
        position.pointee = UInt8(ascii: "\"")
        position += 1
        string.withUTF8Bytes { utf8 in
            forEachRun(of: utf8) { run, escaped in
                position.update(from: run.baseAddress!, count: run.count)
                position += run.count
                if let escaped {
                    escape(escaped) { sequence in
                        position.update(from: sequence.baseAddress!, count: sequence.count)
                        position += sequence.count
                    }
                }
            }
        }
        position.pointee = UInt8(ascii: "\"")
        return position - output + 1
    }

    /// Splits `utf8` into runs of bytes that need no escape, each handed to `body` with the byte
    /// that ends it and must be escaped (nil for the last run, which may be empty).
    @inline(__always)
    private static func forEachRun(
        of utf8: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>, UInt8?) -> Void
    ) {
        var runStart = 0
        for index in utf8.indices {
            let byte = utf8[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            body(UnsafeBufferPointer(rebasing: utf8[runStart..<index]), byte)
            runStart = index + 1
        }
        body(UnsafeBufferPointer(rebasing: utf8[runStart...]), nil)
    }

    /// Hands `body` the escape sequence of `byte` (`\n`, `\"`, `\u001f`, ...).
    private static func escape(_ byte: UInt8, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var sequence: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (UInt8(ascii: "\\"), byte, 0, 0, 0, 0)
        var count = 2
        switch byte {
        case 0x0A: sequence.1 = UInt8(ascii: "n")
        case 0x0D: sequence.1 = UInt8(ascii: "r")
        case 0x09: sequence.1 = UInt8(ascii: "t")
        case 0..<0x20:
            sequence = (
                UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hexDigits[Int(byte >> 4)],
                hexDigits[Int(byte & 0xF)]
            )
            count = 6
        default: break
        }
        withUnsafeBytes(of: &sequence) { body(UnsafeBufferPointer(start: $0.bindMemory(to: UInt8.self).baseAddress, count: count)) }
    }
}
