/// What keychaind reads from a certificate's bytes (kSecAttrCertificateType … kSecAttrPublicKeyHash).
public struct CertificateFields: Sendable, Equatable {
    /// X.509 version, 1...3.
    public var version: Int
    /// DER of the subject and issuer names.
    public var subject: [UInt8]
    public var issuer: [UInt8]
    /// The serial number's content bytes (big-endian, as in the DER INTEGER).
    public var serialNumber: [UInt8]
    /// The subject key identifier extension, if present.
    public var subjectKeyID: [UInt8]?
    /// SHA-1 of the subject public key bits: a private key's `applicationLabel`.
    public var publicKeyHash: [UInt8]

    public init(
        version: Int, subject: [UInt8], issuer: [UInt8], serialNumber: [UInt8], subjectKeyID: [UInt8]?,
        publicKeyHash: [UInt8]
    ) {
        self.version = version
        self.subject = subject
        self.issuer = issuer
        self.serialNumber = serialNumber
        self.subjectKeyID = subjectKeyID
        self.publicKeyHash = publicKeyHash
    }

    /// The read-only certificate attributes these fields determine.
    public var attributes: [Attribute: AttributeValue] {
        var attributes: [Attribute: AttributeValue] = [
            .certificateType: .string("x509v\(min(max(version, 1), 3))"),
            .certificateEncoding: .string("der"),
            .subject: .data(subject),
            .issuer: .data(issuer),
            .serialNumber: .data(serialNumber),
            .publicKeyHash: .data(publicKeyHash),
        ]
        if let subjectKeyID { attributes[.subjectKeyID] = .data(subjectKeyID) }
        return attributes
    }
}

/// Reads a DER X.509 certificate. Bytes that are not one are errSecParam.
/// Implemented with OpenSSL by `X509CertificateParser` in KeychainStore.
public protocol CertificateParser: Sendable {
    func parse(_ der: [UInt8]) throws -> CertificateFields
}
