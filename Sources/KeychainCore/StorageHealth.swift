/// Which storage a vault is on, and whether it answered its last check: the storage part of
/// health (`Vault.storage`, `HealthAnswer`).
public struct StorageHealth: Sendable, Equatable {
    public enum Backend: String, Sendable {
        case sqlite
        case postgresql
    }

    public var backend: Backend
    /// Whether the database answered its last check (always true for SQLite's file).
    public var reachable: Bool

    public init(backend: Backend, reachable: Bool) {
        self.backend = backend
        self.reachable = reachable
    }
}
