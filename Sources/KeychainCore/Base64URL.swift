/// base64url without padding (RFC 4648 §5), the form of keychaind's opaque values: persistent
/// references, audit tags, client tokens and page cursors.
public enum Base64URL {
    public static let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

    /// Written straight into the string's storage, three bytes (four characters) at a time: an
    /// audit tag (16 bytes, on every audited request) took ~700 instructions a bit-buffer's byte
    /// at a time (callgrind).
    public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: (bytes.count * 4 + 2) / 3) { output in
            let alphabet = alphabet.utf8Start
            func character(_ group: UInt32, _ shift: UInt32) -> UInt8 { alphabet[Int((group >> shift) & 63)] }
            var count = 0
            var index = 0
            while index + 3 <= bytes.count {
                let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                output[count] = character(group, 18)
                output[count + 1] = character(group, 12)
                output[count + 2] = character(group, 6)
                output[count + 3] = character(group, 0)
                count += 4
                index += 3
            }
            let left = bytes.count - index
            if left > 0 {
                let group = UInt32(bytes[index]) << 16 | (left == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
                output[count] = character(group, 18)
                output[count + 1] = character(group, 12)
                count += 2
                if left == 2 {
                    output[count] = character(group, 6)
                    count += 1
                }
            }
            return count
        }
    }

    /// The bytes of `text`; nil for anything `encode` does not write (padding, other characters,
    /// a length no byte count gives, bits set past the last byte).
    public static func decode(_ text: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count * 3 / 4)
        var group: UInt32 = 0
        var bits = 0
        for character in text.utf8 {
            let value: UInt8
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = character - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = character - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "_"): value = 63
            default: return nil
            }
            group = group << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: group >> UInt32(bits)))
                group &= (1 << UInt32(bits)) - 1
            }
        }
        guard bits < 6, group == 0 else { return nil }
        return bytes
    }
}
