import Foundation
import KeychainCore
import Testing

@Suite struct PersistentRefTests {
    /// A reference is base64url of 16 bytes without padding: decoded by Foundation's base64 (the
    /// alphabet mapped back, the padding put back), it gives 16 bytes that encode to it again.
    @Test func isBase64URLOfSixteenBytes() throws {
        for _ in 0..<200 {
            let text = PersistentRef.random().rawValue
            #expect(PersistentRef(text) != nil)
            let standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "=="
            let bytes = try #require(Data(base64Encoded: standard))
            #expect(bytes.count == 16)
            let again = bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(again == text)
        }
    }

    /// Every one of the 128 bits varies: over many references each bit is seen both set and clear.
    @Test func everyBitVaries() throws {
        var seenSet = [Bool](repeating: false, count: 128), seenClear = seenSet
        for _ in 0..<400 {
            let text = PersistentRef.random().rawValue
            let standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "=="
            let bytes = try #require(Data(base64Encoded: standard))
            for bit in 0..<128 {
                if bytes[bit / 8] >> (7 - bit % 8) & 1 == 1 { seenSet[bit] = true } else { seenClear[bit] = true }
            }
        }
        #expect(seenSet.allSatisfy { $0 } && seenClear.allSatisfy { $0 })
    }
}
