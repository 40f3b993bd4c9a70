import Dispatch
public import Foundation
public import KeychainCore
import Synchronization
import Testing

/// What every `ConnectSessionStore` must do, checked with `#expect`: call `run()` from one test per
/// backend. `make` returns a new, empty store (and whatever keeps it alive); `another` (when the
/// backend is shared by nodes) a second node's view of the same store, for the single use of a
/// state across nodes.
public struct ConnectSessionStoreConformance: Sendable {
    public typealias Factory = @Sendable () throws -> (
        store: any ConnectSessionStore, another: (any ConnectSessionStore)?, keepAlive: AnyObject?
    )

    private let make: Factory

    public init(_ make: @escaping Factory) { self.make = make }

    public func run() throws {
        try roundTrip()
        try browserBinding()
        try stateIsSingleUse()
        try outcomesAndPurge()
    }

    static let now = Date(millisecondsSince1970: 1_800_000_000_000)

    package static func session(_ id: String, user: String? = "ana", returnTo: String? = "https://app.example/done", expiresIn: TimeInterval = 600)
        -> ConnectSession
    {
        ConnectSession(
            id: id, provider: "calendar", key: RefreshKey(service: "calendar.example", user: user, group: "team"),
            scopes: ["openid", "calendar.read"], redirectURI: "https://vault.example/v1/oauth/callback", returnTo: returnTo,
            verifier: SecretBytes(utf8: "verifier-\(id)-0123456789abcdefghijklmnopqrstuvwxyz", lockedInMemory: false),
            createdAt: now, expiresAt: now.addingTimeInterval(expiresIn))
    }

    static func hash(_ text: String) -> [UInt8] { Array(text.utf8) + [UInt8](repeating: 7, count: 32 - min(32, text.utf8.count)) }

    /// Every field comes back as stored, the verifier included; an unknown id is nil; an id is unique.
    public func roundTrip() throws {
        let (store, _, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        let full = Self.session("s-full")
        try store.create(full)
        try store.create(Self.session("s-bare", user: nil, returnTo: nil))
        let read = try #require(try store.session(id: "s-full"))
        #expect(read.provider == "calendar" && read.key == full.key && read.scopes == full.scopes)
        #expect(read.redirectURI == full.redirectURI && read.returnTo == full.returnTo)
        #expect(read.verifier == full.verifier)
        #expect(read.createdAt == full.createdAt && read.expiresAt == full.expiresAt)
        #expect(read.outcome == .pending && read.stateHash == nil && read.browserHash == nil)
        let bare = try #require(try store.session(id: "s-bare"))
        #expect(bare.key.user == nil && bare.returnTo == nil)
        #expect(try store.session(id: "s-none") == nil)
        #expect(throws: KeychainError.self) { try store.create(Self.session("s-full")) }
    }

    /// The first hop binds; the same browser may hop again (a new state replaces the old) until
    /// the callback; another browser, an ended or expired session change nothing.
    public func browserBinding() throws {
        let (store, _, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        let now = Self.now
        try store.create(Self.session("s1"))
        let browser = Self.hash("browser-1")
        #expect(try store.bindBrowser(id: "none", browserHash: browser, stateHash: Self.hash("x"), at: now) == .notPending)
        #expect(try store.bindBrowser(id: "s1", browserHash: browser, stateHash: Self.hash("state-a"), at: now) == .bound)
        #expect(try store.session(id: "s1")?.browserHash == browser)
        #expect(
            try store.bindBrowser(id: "s1", browserHash: Self.hash("browser-2"), stateHash: Self.hash("state-x"), at: now)
                == .heldElsewhere)
        #expect(try store.bindBrowser(id: "s1", browserHash: browser, stateHash: Self.hash("state-b"), at: now) == .bound)
        #expect(try store.consumeState(Self.hash("state-a"), at: now) == nil, "a replaced state is no longer valid")
        #expect(try store.consumeState(Self.hash("state-x"), at: now) == nil)
        #expect(try store.consumeState(Self.hash("state-b"), at: now)?.id == "s1")
        #expect(
            try store.bindBrowser(id: "s1", browserHash: browser, stateHash: Self.hash("state-c"), at: now) == .heldElsewhere,
            "once the callback has begun, no new state")
        try store.create(Self.session("s2", expiresIn: 60))
        #expect(
            try store.bindBrowser(id: "s2", browserHash: browser, stateHash: Self.hash("state-d"), at: now.addingTimeInterval(60))
                == .notPending)
        try store.create(Self.session("s3"))
        #expect(try store.finish(id: "s3", outcome: .failed(error: "access_denied")))
        #expect(try store.bindBrowser(id: "s3", browserHash: browser, stateHash: Self.hash("state-e"), at: now) == .notPending)
    }

    /// A state is taken once, even by many callers at once (on two nodes where the backend has
    /// them); an expired or ended session's state is taken by none.
    public func stateIsSingleUse() throws {
        let (store, another, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        let now = Self.now
        try store.create(Self.session("race"))
        #expect(try store.bindBrowser(id: "race", browserHash: Self.hash("b"), stateHash: Self.hash("race-state"), at: now) == .bound)
        let stores = [store, another ?? store]
        let winners = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            do {
                if let taken = try stores[index % 2].consumeState(Self.hash("race-state"), at: now) {
                    #expect(taken.id == "race" && taken.verifier == Self.session("race").verifier)
                    winners.add(1, ordering: .relaxed)
                }
            } catch {
                failures.add(1, ordering: .relaxed)
            }
        }
        #expect(winners.load(ordering: .relaxed) == 1)
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(try store.session(id: "race")?.stateHash == nil)
        #expect(try store.session(id: "race")?.outcome == .pending, "taking the state does not end the session")

        try store.create(Self.session("late", expiresIn: 60))
        _ = try store.bindBrowser(id: "late", browserHash: Self.hash("b"), stateHash: Self.hash("late-state"), at: now)
        #expect(try store.consumeState(Self.hash("late-state"), at: now.addingTimeInterval(61)) == nil)
        try store.create(Self.session("ended"))
        _ = try store.bindBrowser(id: "ended", browserHash: Self.hash("b"), stateHash: Self.hash("ended-state"), at: now)
        #expect(try store.finish(id: "ended", outcome: .failed(error: ConnectOutcome.expired)))
        #expect(try store.consumeState(Self.hash("ended-state"), at: now) == nil)
    }

    /// An outcome is recorded once and read back whole; `ended` names ended and unknown sessions,
    /// not pending ones; a purge removes sessions expired before its time only.
    public func outcomesAndPurge() throws {
        let (store, another, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        try store.create(Self.session("ok"))
        try store.create(Self.session("no"))
        try store.create(Self.session("wait"))
        try store.create(Self.session("short", expiresIn: 60))
        #expect(try store.finish(id: "ok", outcome: .connected(refreshable: true, grantedScope: "openid calendar.read")))
        #expect(try !store.finish(id: "ok", outcome: .failed(error: "access_denied")), "a session ends once")
        #expect(try store.finish(id: "no", outcome: .failed(error: "access_denied")))
        #expect(try !store.finish(id: "gone", outcome: .failed(error: "access_denied")))
        let reader = another ?? store
        #expect(try reader.session(id: "ok")?.outcome == .connected(refreshable: true, grantedScope: "openid calendar.read"))
        #expect(try reader.session(id: "no")?.outcome == .failed(error: "access_denied"))
        try store.create(Self.session("plain"))
        #expect(try store.finish(id: "plain", outcome: .connected(refreshable: false, grantedScope: nil)))
        #expect(try reader.session(id: "plain")?.outcome == .connected(refreshable: false, grantedScope: nil))
        #expect(try reader.ended(among: ["ok", "no", "wait", "gone", "short"]) == ["ok", "no", "gone"])
        #expect(try reader.ended(among: []) == [])
        #expect(try store.purge(expiredBefore: Self.now.addingTimeInterval(120)) == 1)
        #expect(try store.session(id: "short") == nil)
        #expect(try store.session(id: "wait") != nil)
        #expect(try store.purge(expiredBefore: Self.now.addingTimeInterval(601)) == 4)
    }
}
