/// A lock every node sharing the vault takes around one token exchange of a refresh setting, so
/// that several nodes (PostgreSQL) exchange one refresh token once, not once each: a rotating
/// provider revokes a refresh token used twice. The node that waited then reads the tokens the
/// other stored and finds them fresh. One node needs none (its single flight is the lock).
public protocol RefreshExchangeLock: Sendable {
    /// Runs `body` holding the lock for `key`, waiting at most `seconds` for it; false, with
    /// `body` not run, when the wait ran out.
    func withLock(_ key: RefreshKey, waitingUpTo seconds: Double, _ body: () throws -> Void) throws -> Bool
}
