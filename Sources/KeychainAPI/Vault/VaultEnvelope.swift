/// Vault's answer envelope, as OpenBao writes it on every answer of the Vault-compatible surface
/// (docs/api.md, "Tools written for Vault"): `request_id`, `lease_id`, `renewable`,
/// `lease_duration`, `data`, `wrap_info`, `warnings`, `auth`. Tools read `data` (and an agent
/// `lease_duration`, to know when to render again); the rest is there because some check it.
public struct VaultEnvelope: JSONAnswer {
    /// A fresh random id per answer, as Vault gives (a UUID's form).
    public var requestID: String
    public var leaseDuration: Int
    public var renewable: Bool
    /// Unknown keys the request carried, named as OpenBao names them; nil: `null`.
    public var warnings: [String]?
    /// Writes `data`'s members; nil: `"data": null`.
    public var data: (@Sendable (inout JSONWriter) -> Void)?

    public init(
        leaseDuration: Int = 0, renewable: Bool = false, warnings: [String]? = nil,
        data: (@Sendable (inout JSONWriter) -> Void)?
    ) {
        requestID = VaultEnvelope.randomRequestID()
        self.leaseDuration = leaseDuration
        self.renewable = renewable
        self.warnings = warnings.flatMap { $0.isEmpty ? nil : $0 }
        self.data = data
    }

    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: 256) { answer in
            answer.member("request_id", requestID)
            answer.member("lease_id", "")
            answer.member("renewable", renewable)
            answer.member("lease_duration", leaseDuration)
            answer.key("data")
            if let data { answer.object(data) } else { answer.null() }
            answer.key("wrap_info")
            answer.null()
            answer.key("warnings")
            if let warnings {
                answer.array { list in
                    for warning in warnings { list.string(warning) }
                }
            } else {
                answer.null()
            }
            answer.key("auth")
            answer.null()
        }
    }

    /// 128 random bits (`RequestIDs`) in a UUID's 8-4-4-4-12 hex form (written byte by byte:
    /// every answer of this surface carries one).
    public static func randomRequestID() -> String {
        var random = RequestIDs.next()
        let digits: StaticString = "0123456789abcdef"
        return withUnsafeBytes(of: &random) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                var at = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[at] = UInt8(ascii: "-")
                        at += 1
                    }
                    text[at] = digits.utf8Start[Int(byte >> 4)]
                    text[at + 1] = digits.utf8Start[Int(byte & 0x0F)]
                    at += 2
                }
                return at
            }
        }
    }
}

/// Vault's error body, `{"errors":[...]}` (an empty list for a missing secret, as Vault answers).
public struct VaultErrors: JSONAnswer {
    public var messages: [String]

    public init(_ messages: [String]) { self.messages = messages }

    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: 64) { answer in
            answer.key("errors")
            answer.array { list in
                for message in messages { list.string(message) }
            }
        }
    }
}

