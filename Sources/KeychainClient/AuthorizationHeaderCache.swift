import KeychainAPI
import KeychainCore
import Synchronization

/// `getAuthorizationHeader`'s answers kept in process when `Configuration.cachesAuthorizationHeader`
/// is on, each for as long as keychaind said it stays fresh (`Keychaind-Fresh-For`: until the
/// token's `expiresAt − refreshBefore`), counted on the monotonic clock from the moment the
/// request was sent, so neither the trip nor a change of the wall clock can stretch it. An answer
/// without that header (no expiry stored) is never kept.
final class AuthorizationHeaderCache: Sendable {
    private struct Key: Hashable {
        var service: String
        var user: String?
        var accessGroup: String?

        init(_ naming: TokenNaming) {
            service = naming.service
            user = naming.user
            accessGroup = naming.accessGroup
        }
    }

    private struct Entry {
        var header: String
        var freshUntil: ContinuousClock.Instant
    }

    private let entries = Mutex<[Key: Entry]>([:])
    /// The monotonic clock (a test's own, to step past a window without waiting it out).
    let now: @Sendable () -> ContinuousClock.Instant

    init(now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.now = now
    }

    /// The header kept for `naming` while it is fresh; nil when none is.
    func header(for naming: TokenNaming) -> String? {
        let now = now()
        return entries.withLock { entries in
            guard let entry = entries[Key(naming)], entry.freshUntil > now else { return nil }
            return entry.header
        }
    }

    /// Keeps `header` for `naming` for `freshFor` (the answer's `Keychaind-Fresh-For` value)
    /// from `askedAt`; an answer with no such header, or 0, is not kept. Headers no longer
    /// fresh are dropped meanwhile.
    func keep(_ header: String, for naming: TokenNaming, freshFor value: String?, askedAt: ContinuousClock.Instant) {
        guard let seconds = AuthorizationAnswer.freshForSeconds(value), seconds > 0 else { return }
        let now = now()
        entries.withLock { entries in
            entries = entries.filter { $0.value.freshUntil > now }
            entries[Key(naming)] = Entry(header: header, freshUntil: askedAt + .seconds(seconds))
        }
    }

    /// Drops what is kept for a service's tokens (in any group): this client has just stored new
    /// ones, removed them, refreshed them or changed how they are refreshed (called once the
    /// request is done, so that a fetch answered before it cannot keep the old header after).
    func forget(service: String, user: String?) {
        entries.withLock { entries in
            entries = entries.filter { $0.key.service != service || $0.key.user != user }
        }
    }
}
