import KeychainCore
import Testing

struct UTF8BytesTests {
    /// Short strings live inside the value, long ones in storage: both are read whole.
    @Test(arguments: ["", "a", "fifteen bytes!!", "sixteen bytes!!!", "é😀 and more than sixteen bytes"])
    func stringsAreReadAndAppendedWhole(text: String) {
        var bytes: [UInt8] = [0x3E]
        bytes.appendUTF8(text)
        #expect(bytes == [0x3E] + Array(text.utf8))
        #expect(text.withUTF8Bytes { Array($0) } == Array(text.utf8))
    }

    /// Answers exactly what `String(validating:as:)` answers, on its ASCII path and the other.
    @Test(arguments: [
        [], Array("account".utf8), Array("é😀".utf8), Array("a\u{0}b".utf8),
        [0xFF], [0x61, 0x80], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF0, 0x9F, 0x98], [0xE2, 0x82],
    ] as [[UInt8]])
    func validatingMatchesTheStandardLibrary(bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { buffer in
            #expect(String(validatingUTF8Bytes: buffer) == String(validating: buffer, as: UTF8.self))
        }
    }

    @Test func utf8StringOfSecrets() {
        #expect(SecretBytes(utf8: "tök\u{0}en").utf8String() == "tök\u{0}en")
        #expect(SecretBytes([UInt8]()).utf8String() == "")
        #expect(SecretBytes([0x61, 0xFF]).utf8String() == nil)
        #expect(SecretBytes([0xED, 0xA0, 0x80]).utf8String() == nil)  // a UTF-16 surrogate
        #expect(SecretBytes([0xC0, 0xAF]).utf8String() == nil)  // overlong
        #expect(SecretBytes(utf8: "tök").utf8String(after: "Bearer ") == "Bearer tök")
        #expect(SecretBytes([UInt8]()).utf8String(after: "Bearer ") == "Bearer ")
        #expect(SecretBytes([0x61, 0xFF]).utf8String(after: "Bearer ") == nil)
    }
}
