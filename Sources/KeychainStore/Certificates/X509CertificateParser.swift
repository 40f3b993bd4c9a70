internal import COpenSSL
public import KeychainCore

/// Reads DER X.509 certificates with OpenSSL: version, subject and issuer (DER of the names),
/// serial number, subject key identifier and the SHA-1 of the public key bits.
/// Bytes that are not exactly one DER certificate are errSecParam.
public struct X509CertificateParser: CertificateParser {
    public init() {}

    public func parse(_ der: [UInt8]) throws -> CertificateFields {
        let certificate: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            let parsed = d2i_X509(nil, &cursor, buffer.count)
            // Trailing bytes after the certificate are refused, too.
            if let parsed, cursor != base + buffer.count {
                X509_free(parsed)
                return nil
            }
            return parsed
        }
        defer { ERR_clear_error() }
        guard let certificate else { throw KeychainError.param("\"data\" is not a DER X.509 certificate") }
        defer { X509_free(certificate) }

        let version = Int(X509_get_version(certificate)) + 1
        guard let subject = Self.der(of: X509_get_subject_name(certificate)),
            let issuer = Self.der(of: X509_get_issuer_name(certificate)),
            let serial = Self.serialBytes(X509_get_serialNumber(certificate)),
            let publicKeyBits = X509_get0_pubkey_bitstr(certificate)
        else { throw KeychainError.param("\"data\" is not a usable X.509 certificate") }

        var subjectKeyID: [UInt8]?
        if let skid = X509_get0_subject_key_id(certificate) {
            subjectKeyID = Self.bytes(of: skid)
        }
        let keyBytes = Self.bytes(of: publicKeyBits)
        var hash = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        keyBytes.withUnsafeBufferPointer { input in
            hash.withUnsafeMutableBufferPointer { output in
                _ = SHA1(input.baseAddress, input.count, output.baseAddress)
            }
        }
        return CertificateFields(
            version: version, subject: subject, issuer: issuer, serialNumber: serial,
            subjectKeyID: subjectKeyID, publicKeyHash: hash)
    }

    private static func der(of name: OpaquePointer?) -> [UInt8]? {
        guard let name else { return nil }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509_NAME(name, &output)
        guard length > 0, let output else { return nil }
        defer { COpenSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    private static func bytes(of string: UnsafePointer<ASN1_STRING>) -> [UInt8] {
        let length = Int(ASN1_STRING_length(string))
        guard length > 0, let data = ASN1_STRING_get0_data(string) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }

    /// The serial number as its DER INTEGER content: big-endian two's complement, so a positive
    /// number whose high bit is set gets a leading zero byte (as Apple's SecCertificate keeps it).
    private static func serialBytes(_ serial: UnsafePointer<ASN1_INTEGER>?) -> [UInt8]? {
        guard let serial else { return nil }
        var magnitude = bytes(of: serial)
        if magnitude.isEmpty { magnitude = [0] }
        if ASN1_STRING_type(serial) == V_ASN1_NEG_INTEGER { return magnitude }
        if let first = magnitude.first, first & 0x80 != 0 { magnitude.insert(0, at: 0) }
        return magnitude
    }
}
