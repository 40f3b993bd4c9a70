import Foundation

/// Items the tests store: the certificate and the identity are openapi.yaml's examples of
/// `addCertificate` and `addIdentity` (P-256, self-signed, valid until 2126).
enum Fixtures {
    /// DER of "CN=keychaind example 2", base64.
    static let certificate =
        "MIIBkzCCATmgAwIBAgIUaV4s40XOQq70yQoBx6ma4U/tW3QwCgYIKoZIzj0EAwIwHjEcMBoGA1UEAwwTa2V5Y2hhaW5kIGV4YW1wbGUgMjAgFw0yNjExMjEyMTQ5MjFaGA8yMTI2MTAyODIxNDkyMVowHjEcMBoGA1UEAwwTa2V5Y2hhaW5kIGV4YW1wbGUgMjBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABAQepr8LKAurf+jgwXsOdvUTqe9k17fjsrrMdDIXw0qlDNw8iokS8KzvbTr/575Ijtu7Q4XPB5u/yVmGBOqmRAGjUzBRMB0GA1UdDgQWBBTeVaj0GXIQsskWWFLZ1H1YkdHuBTAfBgNVHSMEGDAWgBTeVaj0GXIQsskWWFLZ1H1YkdHuBTAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIBRedVDXgp2tL0nQJ7zn6vJxSsTs9rL+OavpVZ3VANq5AiEA3YrqB4srKKBN0f0ZdnihHuO6tceK1LCTbGPcC/D3zs4="
    /// Its serial number's content bytes (0x695E2C…5B74), base64: kSecAttrSerialNumber.
    static let certificateSerialNumber = "aV4s40XOQq70yQoBx6ma4U/tW3Q="

    /// DER of "CN=keychaind example", base64, and its PKCS#8 private key.
    static let identityCertificate =
        "MIIBjzCCATWgAwIBAgIUf3ThRIpdUov5sC0RUsBHwncgd2MwCgYIKoZIzj0EAwIwHDEaMBgGA1UEAwwRa2V5Y2hhaW5kIGV4YW1wbGUwIBcNMjYxMTIxMjE0OTIxWhgPMjEyNjEwMjgyMTQ5MjFaMBwxGjAYBgNVBAMMEWtleWNoYWluZCBleGFtcGxlMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEBB6mvwsoC6t/6ODBew529ROp72TXt+Oyusx0MhfDSqUM3DyKiRLwrO9tOv/nvkiO27tDhc8Hm7/JWYYE6qZEAaNTMFEwHQYDVR0OBBYEFN5VqPQZchCyyRZYUtnUfViR0e4FMB8GA1UdIwQYMBaAFN5VqPQZchCyyRZYUtnUfViR0e4FMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIgUosuNNPbP/XX1VnNbjln4zNoVXLeQrtKrsP7rAZJhl0CIQDWb9FaTUVhMFf2SzubX4pJHzeL2LEkPduSEHK2O3K1xw=="
    static let identityPrivateKey =
        "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg+9iqhScYjoLYINcMkNy15UwkYlRB5XXoviKhtDky4FahRANCAAQEHqa/CygLq3/o4MF7Dnb1E6nvZNe347K6zHQyF8NKpQzcPIqJEvCs7206/+e+SI7bu0OFzwebv8lZhgTqpkQB"

    /// A 256-bit AES key's bytes (0x00…0x1F), base64.
    static let aesKey = Data(0..<32).base64EncodedString()

    static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
}
