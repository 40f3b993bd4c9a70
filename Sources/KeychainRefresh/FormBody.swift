import KeychainCore
import KeychainAPI

/// An `application/x-www-form-urlencoded` body (the WHATWG form encoding RFC 6749 §B names) built
/// into one buffer that is wiped when it is taken out as `bytes`: it carries the refresh
/// token and, with `post` client authentication, the client secret.
struct FormBody {
    private var buffer: [UInt8] = []

    mutating func add(_ name: String, _ value: String) {
        var bytes = Array(value.utf8)
        add(name, utf8: &bytes)
    }

    mutating func add(_ name: String, _ value: SecretBytes) {
        var bytes = value.copyBytes()
        add(name, utf8: &bytes)
    }

    private mutating func add(_ name: String, utf8 value: inout [UInt8]) {
        if !buffer.isEmpty { buffer.append(UInt8(ascii: "&")) }
        Self.encode(name.utf8, into: &buffer)
        buffer.append(UInt8(ascii: "="))
        Self.encode(value, into: &buffer)
        SecretBytes.wipe(&value)
    }

    /// The body; the builder's buffer is wiped.
    var bytes: SecretBytes {
        mutating get {
            let body = SecretBytes(buffer)
            SecretBytes.wipe(&buffer)
            return body
        }
    }

    /// `value` form-encoded, as it goes on the wire.
    static func encoded(_ value: SecretBytes) -> SecretBytes {
        var bytes = value.copyBytes()
        var encoded: [UInt8] = []
        encode(bytes, into: &encoded)
        SecretBytes.wipe(&bytes)
        defer { SecretBytes.wipe(&encoded) }
        return SecretBytes(encoded)
    }

    /// `Basic base64(form-encoded id ":" form-encoded secret)` (RFC 6749 §2.3.1).
    static func basicAuthorization(clientId: String, clientSecret: SecretBytes) -> SecretBytes {
        var credentials: [UInt8] = []
        encode(clientId.utf8, into: &credentials)
        credentials.append(UInt8(ascii: ":"))
        var secret = clientSecret.copyBytes()
        encode(secret, into: &credentials)
        SecretBytes.wipe(&secret)
        var header = Array("Basic ".utf8)
        credentials.withUnsafeBytes { Base64.append($0, to: &header) }
        SecretBytes.wipe(&credentials)
        let value = SecretBytes(header)
        SecretBytes.wipe(&header)
        return value
    }

    /// Letters, digits and `*-._` as they are, space as `+`, every other byte as `%XX`.
    private static func encode<Bytes: Sequence<UInt8>>(_ bytes: Bytes, into output: inout [UInt8]) {
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"):
                output.append(byte)
            case UInt8(ascii: " "):
                output.append(UInt8(ascii: "+"))
            default:
                output.append(UInt8(ascii: "%"))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            }
        }
    }
}
