import Foundation
import KeychainCore

/// Standard base64 with padding (RFC 4648 §4), as the API spells bytes: strict on input.
public enum Base64 {
    public static func encode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        var output: [UInt8] = []
        if bytes.withContiguousStorageIfAvailable({ append(UnsafeRawBufferPointer($0), to: &output) }) == nil {
            Array(bytes).withUnsafeBytes { append($0, to: &output) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// nil unless `text` is standard base64 with correct padding and no whitespace.
    public static func decode(_ text: String) -> [UInt8]? {
        guard text.utf8.count % 4 == 0,
            text.utf8.allSatisfy({ alphabetBytes.contains($0) }),
            let data = Data(base64Encoded: text)
        else { return nil }
        return Array(data)
    }

    private static let alphabetBytes = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=".utf8)
    private static let digits = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Appends the base64 of `bytes` to `output`: an answer's secret goes into the answer's bytes
    /// directly, with no string (nor copy of the secret) in between.
    public static func append(_ bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        output.reserveCapacity(output.count + (bytes.count + 2) / 3 * 4)
        digits.withUnsafeBufferPointer { digits in
            var index = 0
            while index + 3 <= bytes.count {
                let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                output.append(digits[Int(group >> 18)])
                output.append(digits[Int(group >> 12 & 63)])
                output.append(digits[Int(group >> 6 & 63)])
                output.append(digits[Int(group & 63)])
                index += 3
            }
            let rest = bytes.count - index
            guard rest > 0 else { return }
            let group = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            output.append(digits[Int(group >> 18)])
            output.append(digits[Int(group >> 12 & 63)])
            output.append(rest == 2 ? digits[Int(group >> 6 & 63)] : UInt8(ascii: "="))
            output.append(UInt8(ascii: "="))
        }
    }
}
