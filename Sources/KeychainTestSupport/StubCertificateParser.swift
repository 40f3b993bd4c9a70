public import KeychainCore

/// A `CertificateParser` for tests of the service layer: "certificates" are the bytes
/// `CERT:<name>`, whose fields are derived from the name (serial = name bytes, public-key
/// hash = 20 bytes of a checksum of the name); anything else is errSecParam, as for OpenSSL.
public struct StubCertificateParser: CertificateParser {
    public init() {}

    public func parse(_ der: [UInt8]) throws -> CertificateFields {
        let prefix = Array("CERT:".utf8)
        guard der.count > prefix.count, Array(der.prefix(prefix.count)) == prefix else {
            throw KeychainError.param("\"data\" is not a DER X.509 certificate")
        }
        let name = Array(der.dropFirst(prefix.count))
        return CertificateFields(
            version: 3, subject: Array("subject:".utf8) + name, issuer: Array("issuer:test-ca".utf8),
            serialNumber: name, subjectKeyID: Array("skid:".utf8) + name, publicKeyHash: Self.hash(name))
    }

    /// The `publicKeyHash` (and so the private key's `applicationLabel`) of `CERT:<name>`.
    public static func hash(_ name: [UInt8]) -> [UInt8] {
        var state: UInt32 = 2_166_136_261
        return (0..<20).map { index in
            for byte in name { state = (state ^ UInt32(byte)) &* 16_777_619 }
            state = (state ^ UInt32(index)) &* 16_777_619
            return UInt8(truncatingIfNeeded: state)
        }
    }

    public static func certificate(_ name: String) -> [UInt8] { Array("CERT:\(name)".utf8) }
}
