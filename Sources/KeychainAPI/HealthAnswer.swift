import KeychainCore

/// `GET /health`: `{"status":"ok","locked":false,"version":"…"}`, `"locked"` while locked.
public struct HealthAnswer: JSONAnswer {
    public var locked: Bool

    public init(locked: Bool) {
        self.locked = locked
    }

    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: 64) { answer in
            answer.member("status", locked ? "locked" : "ok")
            answer.member("locked", locked)
            answer.member("version", KeychaindVersion.current)
        }
    }
}
