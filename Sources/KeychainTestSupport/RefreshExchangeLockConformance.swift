public import KeychainCore
import Testing

/// What a `RefreshExchangeLock` must do, checked with `#expect`: call `run()` from one test per
/// backend that shares a vault between nodes.
///
/// `make` returns two nodes' locks over one new vault's storage (and whatever keeps them alive).
///
/// A backend with one node (SQLite) has no lock: the refresher's single flight, one exchange per
/// setting in the process, is its lock (`TokenRefresher`; checked end to end by
/// ProviderStallTests and TokenRefreshRaceTests). For such a backend the conformance is that its
/// vault offers none (`expectNone`), so that the refresher takes no lock it does not need.
public struct RefreshExchangeLockConformance: Sendable {
    public typealias Factory = @Sendable () throws -> (nodes: [any RefreshExchangeLock], keepAlive: AnyObject?)

    private let make: Factory

    public init(_ make: @escaping Factory) { self.make = make }

    /// Every check, each on a vault of its own.
    public func run() throws {
        try oneNodeAtATimeHoldsASettingsLock()
        try aBodyThatThrowsReleasesTheLock()
    }

    /// One backend, one node: no lock (see above).
    public static func expectNone(_ lock: (any RefreshExchangeLock)?) {
        #expect(lock == nil, "one node needs no exchange lock: its single flight is the lock")
    }

    /// While one node holds a setting's lock another cannot take it (false, its body not run),
    /// another setting's lock is free, and once released the other node takes it.
    public func oneNodeAtATimeHoldsASettingsLock() throws {
        let (nodes, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        let (first, second) = (nodes[0], nodes[1])
        let key = RefreshKey(service: "api.example.com", user: nil, group: "g1")
        var ranSecond: Bool?
        let heldFirst = try first.withLock(key, waitingUpTo: 1) {
            // The second node cannot take it while the first holds it ...
            ranSecond = try second.withLock(key, waitingUpTo: 0.2) {}
            // ... but another setting's lock is free.
            #expect(try second.withLock(RefreshKey(service: "other", user: nil, group: "g1"), waitingUpTo: 0.2) {})
        }
        #expect(heldFirst)
        #expect(ranSecond == false)
        // Released: the second node takes it now.
        #expect(try second.withLock(key, waitingUpTo: 1) {})
    }

    /// The body's error reaches the caller, and the lock is released all the same.
    public func aBodyThatThrowsReleasesTheLock() throws {
        let (nodes, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        let key = RefreshKey(service: "api.example.com", user: "alice", group: "g1")
        #expect(throws: KeychainError.param("the exchange failed")) {
            _ = try nodes[0].withLock(key, waitingUpTo: 1) { throw KeychainError.param("the exchange failed") }
        }
        #expect(try nodes[1].withLock(key, waitingUpTo: 1) {})
    }
}
