import Foundation

/// A signature algorithm keychaind implements, as OpenSSL is to run it.
struct SignatureScheme: Equatable {
    enum KeyFamily { case rsa, ec }
    enum Padding { case pkcs1v15, pss, ecdsa }
    enum Hash: String { case sha1 = "SHA1", sha224 = "SHA224", sha256 = "SHA256", sha384 = "SHA384", sha512 = "SHA512" }

    let family: KeyFamily
    let padding: Padding
    let hash: Hash
    /// The input is a digest already (Apple's `...Digest...` algorithms), not the message.
    let signsDigest: Bool

    /// The scheme an algorithm names, or nil for the algorithms keychaind does not implement.
    init?(_ algorithm: SecKeyAlgorithm) {
        guard let scheme = Self.byName[algorithm.rawValue] else { return nil }
        self = scheme
    }

    private init(family: KeyFamily, padding: Padding, hash: Hash, signsDigest: Bool) {
        self.family = family
        self.padding = padding
        self.hash = hash
        self.signsDigest = signsDigest
    }

    /// Apple's name of every signature algorithm with a hash: `algid:sign:<RSA|ECDSA>:<message|digest>-<padding>:<hash>`.
    private static let byName: [String: SignatureScheme] = {
        var schemes: [String: SignatureScheme] = [:]
        let paddings: [(KeyFamily, Padding, String)] = [
            (.rsa, .pkcs1v15, "RSA:%@-PKCS1v15"), (.rsa, .pss, "RSA:%@-PSS"), (.ec, .ecdsa, "ECDSA:%@-X962"),
        ]
        for (family, padding, pattern) in paddings {
            for hash in [Hash.sha1, .sha224, .sha256, .sha384, .sha512] {
                for signsDigest in [false, true] {
                    let input = signsDigest ? "digest" : "message"
                    let name = "algid:sign:\(pattern.replacingOccurrences(of: "%@", with: input)):\(hash.rawValue)"
                    schemes[name] = SignatureScheme(family: family, padding: padding, hash: hash, signsDigest: signsDigest)
                }
            }
        }
        return schemes
    }()
}
