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
}
