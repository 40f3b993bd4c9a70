public import KeychainCore

/// `GET /health`: `{"status":"ok","locked":false,"version":"…"}`, `"locked"` while locked. On
/// PostgreSQL it also says which backend and whether the database answered its last check
/// (`"storage":{"backend":"postgresql","reachable":true}`), and `"unavailable"` when it did not.
public struct HealthAnswer: JSONAnswer {
    public var locked: Bool
    /// Absent on SQLite, whose answer stays as it always was.
    public var storage: StorageHealth?

    public init(locked: Bool, storage: StorageHealth? = nil) {
        self.locked = locked
        self.storage = storage
    }

    /// Whether the node serves requests that need the vault (health answers 200, else 503).
    public var isServing: Bool { !locked && storage?.reachable != false }

    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: 96) { answer in
            answer.member("status", locked ? "locked" : storage?.reachable == false ? "unavailable" : "ok")
            answer.member("locked", locked)
            answer.member("version", KeychaindVersion.current)
            if let storage {
                answer.key("storage")
                answer.object { object in
                    object.member("backend", storage.backend.rawValue)
                    object.member("reachable", storage.reachable)
                }
            }
        }
    }
}
