import KeychainAPI
import KeychainCore

extension Router {
    /// `GET /health`: open to all; 200 `{"status":"ok","locked":false,"version":…}`, 503 when locked.
    public mutating func addServiceRoutes(isLocked: @escaping @Sendable () -> Bool) {
        add(.get, "/health", access: .open, audit: .none) { _ in
            let locked = isLocked()
            return .json(status: locked ? 503 : 200, HealthAnswer(locked: locked))
        }
    }
}
