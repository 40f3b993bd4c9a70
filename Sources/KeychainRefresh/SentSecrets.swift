import KeychainCore

/// The secrets one exchange sent its token endpoint (the refresh token, the client secret, the
/// HTTP Basic credentials), as given and as form-encoded on the wire. A provider's error text is
/// kept in `lastError` (which client-role callers read), logged and put in 502 details, so text
/// that repeats one of them, or any `window` bytes of one in a row, is left out: a provider that
/// echoes its request must not put the refresh token there (issue 40, finding 7).
struct SentSecrets {
    /// Bytes in a row that count as a repeat: 48 bits of a base64url token, which a provider's
    /// own words do not contain by chance. A shorter secret counts when repeated whole.
    static let window = 8

    private let secrets: [SecretBytes]

    init(_ secrets: [SecretBytes]) {
        self.secrets = secrets.filter { !$0.isEmpty }
    }

    /// `failure` with any text of the provider's that repeats a secret left out: a refused
    /// grant keeps its error code, not its description; an error code that repeats one is not
    /// kept as a code at all.
    func screen(_ failure: TokenExchangeFailure) -> TokenExchangeFailure {
        switch failure {
        case .refused(let error, let description):
            if repeats(error) {
                return .unavailable("the token endpoint's error code is left out: it repeated a credential sent to it")
            }
            guard let description, repeats(description) else { return failure }
            return .refused(error: error, description: "description left out: it repeated a credential sent to the token endpoint")
        case .unavailable(let reason):
            guard repeats(reason) else { return failure }
            return .unavailable("the token endpoint's answer is left out: it repeated a credential sent to it")
        case .throttled(let reason, let seconds):
            guard repeats(reason) else { return failure }
            return .throttled("the token endpoint's answer is left out: it repeated a credential sent to it", retryAfter: seconds)
        case .held:
            return failure
        }
    }

    /// Whether `text` holds a secret whole or any `window` of its bytes. Each window is read as
    /// one integer, so no copy of a secret is made.
    func repeats(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var windows = Set<UInt64>()
        for start in stride(from: 0, through: bytes.count - Self.window, by: 1) {
            windows.insert(Self.pack(bytes[start..<(start + Self.window)]))
        }
        return secrets.contains { secret in
            secret.withUnsafeBytes { raw in
                let secretBytes = raw.bindMemory(to: UInt8.self)
                guard secretBytes.count >= Self.window else {
                    return bytes.count >= secretBytes.count
                        && (0...(bytes.count - secretBytes.count)).contains { bytes[$0..<($0 + secretBytes.count)].elementsEqual(secretBytes) }
                }
                var window: UInt64 = 0
                for (index, byte) in secretBytes.enumerated() {
                    window = window << 8 | UInt64(byte)
                    if index >= Self.window - 1, windows.contains(window) { return true }
                }
                return false
            }
        }
    }

    private static func pack(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
