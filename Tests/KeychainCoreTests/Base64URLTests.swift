import KeychainCore
import Testing

@Suite struct Base64URLTests {
    @Test func base64url() {
        func encoded(_ bytes: [UInt8]) -> String { bytes.withUnsafeBytes { Base64URL.encode($0) } }
        #expect(encoded([]) == "")
        #expect(encoded([0xFB, 0xFF]) == "-_8")
        #expect(encoded(Array("hello".utf8)) == "aGVsbG8")
        #expect(encoded([UInt8](repeating: 0xFF, count: 16)) == String(repeating: "_", count: 21) + "w")
    }
}
