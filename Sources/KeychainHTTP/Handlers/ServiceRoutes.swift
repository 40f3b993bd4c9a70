import KeychainAPI
public import KeychainCore

extension Router {
    /// `GET /health`: open to all; 200 `{"status":"ok","locked":false,"version":…}`, 503 when
    /// locked or when the database did not answer (`storage`: how it did, nil for SQLite).
    public mutating func addServiceRoutes(
        isLocked: @escaping @Sendable () -> Bool, storage: (@Sendable () -> StorageHealth)? = nil
    ) {
        add(.get, "/health", access: .open, audit: .unaudited) { _ in
            let health = HealthAnswer(locked: isLocked(), storage: storage?())
            return .json(status: health.isServing ? 200 : 503, health)
        }
    }
}
