public import KeychainCore

/// Client tokens: `kc_` + base64url (no padding) of 32 bytes from `RAND_bytes`, accessors `kca_`
/// + hex of 16 more; looked up by
/// the SHA-256 of the token's UTF-8 (the token has 256 random bits, so a fast hash is enough).
public struct OpenSSLClientTokenIssuer: ClientTokenIssuer {
    public init() {}

    public func newToken() -> (token: String, hash: [UInt8]) {
        var bytes: [UInt8]
        do { bytes = try SecureRandom.bytes(32) } catch { fatalError("RAND_bytes failed: cannot make a token safely") }
        defer { SecretBytes.wipe(&bytes) }
        let token = "kc_" + bytes.withUnsafeBytes { Base64URL.encode($0) }
        return (token, hash(token))
    }

    public func newAccessor() -> String {
        let bytes: [UInt8]
        do { bytes = try SecureRandom.bytes(16) } catch { fatalError("RAND_bytes failed: cannot make an accessor safely") }
        return TokenAccessor.format(bytes)
    }

    public func hash(utf8 token: UnsafeRawBufferPointer) -> [UInt8] { Digest.sha256(token) }
}
