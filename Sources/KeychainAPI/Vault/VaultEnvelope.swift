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

    /// 128 random bits in a UUID's 8-4-4-4-12 hex form.
    public static func randomRequestID() -> String {
        var generator = SystemRandomNumberGenerator()
        let high: UInt64 = generator.next()
        let low: UInt64 = generator.next()
        let hex = String(high, radix: 16).leftPadded(16) + String(low, radix: 16).leftPadded(16)
        let utf8 = Array(hex.utf8)
        let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(decoding: utf8[$0], as: UTF8.self) }
        return groups.joined(separator: "-")
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

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        utf8.count >= width ? self : String(repeating: "0", count: width - utf8.count) + self
    }
}
