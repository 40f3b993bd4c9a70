import Testing

@testable import KeychainCore

/// Bytes that count how often they are read.
final class ReadCounter: @unchecked Sendable {
    var reads = 0
}

struct CountingBytes: RandomAccessCollection {
    let bytes: [UInt8]
    let counter: ReadCounter
    var startIndex: Int { 0 }
    var endIndex: Int { bytes.count }
    subscript(position: Int) -> UInt8 {
        counter.reads += 1
        return bytes[position]
    }
}

/// Timing-free, structural: the comparison behind token hashes, key check values and
/// `SecretBytes ==` reads every byte pair, whether the inputs differ at the first byte, the last
/// or not at all, so its running time cannot tell where a guess went wrong.
struct ConstantTimeTests {
    @Test(arguments: [0, 1, 16, 31])
    func readsEveryBytePairWhereverTheFirstDifferenceIs(differenceAt: Int) {
        let stored = [UInt8](repeating: 0xA5, count: 32)
        var guess = stored
        guess[differenceAt] ^= 0xFF
        let counter = ReadCounter()
        let equal = constantTimeEqualBytes(
            CountingBytes(bytes: stored, counter: counter), CountingBytes(bytes: guess, counter: counter))
        #expect(!equal)
        #expect(counter.reads == 64, "both sides, all 32 bytes")
    }

    @Test func equalInputsReadEveryBytePairToo() {
        let counter = ReadCounter()
        let bytes = [UInt8](0..<32)
        #expect(constantTimeEqualBytes(CountingBytes(bytes: bytes, counter: counter), CountingBytes(bytes: bytes, counter: counter)))
        #expect(counter.reads == 64)
    }

    @Test func differentLengthsAreUnequalAfterReadingTheCommonPrefix() {
        let counter = ReadCounter()
        let short = [UInt8](repeating: 1, count: 8)
        let long = [UInt8](repeating: 1, count: 9)
        #expect(!constantTimeEqualBytes(CountingBytes(bytes: short, counter: counter), CountingBytes(bytes: long, counter: counter)))
        #expect(counter.reads == 16)
        // And with a 256-multiple length difference, which `count ^ count` truncated to a byte hides.
        #expect(!constantTimeEqual([UInt8](repeating: 0, count: 1), [UInt8](repeating: 0, count: 257)))
        #expect(constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEqual([1, 2, 3], [1, 2, 4]))
    }
}
