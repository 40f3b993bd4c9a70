public import Foundation
public import KeychainCore
import Testing

/// What every `ProviderHoldStore` must do, checked with `#expect`: call `run()` from one test per
/// backend. `make` returns views of one new, empty store (two nodes' for a backend shared by
/// several, else one), and whatever keeps them alive: a hold made through one view holds in every
/// view.
public struct ProviderHoldStoreConformance: Sendable {
    public typealias Factory = @Sendable () throws -> (views: [any ProviderHoldStore], keepAlive: AnyObject?)

    private let make: Factory

    public init(_ make: @escaping Factory) { self.make = make }

    public func run() throws {
        try aHoldHoldsItsAppOnlyUntilItsEndInEveryView()
        try aHoldIsNeverShortenedAndEndedHoldsAreForgotten()
    }

    static let start = Date(millisecondsSince1970: 1_800_000_000_123)
    static let app = ProviderApp(tokenEndpoint: "https://id.example.com/oauth/token", clientId: "crm-app")

    /// Held until its end (to the millisecond), seen from every view; another client id at the
    /// same endpoint, or the same client id at another endpoint, is not held.
    public func aHoldHoldsItsAppOnlyUntilItsEndInEveryView() throws {
        let (views, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        let first = try #require(views.first)
        let end = Self.start.addingTimeInterval(30.5)
        #expect(try first.holdEnd(Self.app, now: Self.start) == nil)
        try first.hold(Self.app, until: end, now: Self.start)
        for view in views {
            #expect(try view.holdEnd(Self.app, now: Self.start) == end)
            #expect(try view.holdEnd(Self.app, now: end.addingTimeInterval(-0.001)) == end)
            #expect(try view.holdEnd(Self.app, now: end) == nil, "a hold has ended at its end")
            #expect(try view.holdEnd(ProviderApp(tokenEndpoint: Self.app.tokenEndpoint, clientId: "other-app"), now: Self.start) == nil)
            #expect(try view.holdEnd(ProviderApp(tokenEndpoint: "https://id.example.com/token", clientId: "crm-app"), now: Self.start) == nil)
        }
    }

    /// A hold ending earlier leaves the later one (whichever view makes it); a later one extends
    /// it; a new hold at a time past an ended one's end forgets that one.
    public func aHoldIsNeverShortenedAndEndedHoldsAreForgotten() throws {
        let (views, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        let other = try #require(views.last)
        let first = try #require(views.first)
        let long = Self.start.addingTimeInterval(600)
        try first.hold(Self.app, until: long, now: Self.start)
        try other.hold(Self.app, until: Self.start.addingTimeInterval(5), now: Self.start)
        #expect(try first.holdEnd(Self.app, now: Self.start) == long)
        let longer = Self.start.addingTimeInterval(900)
        try other.hold(Self.app, until: longer, now: Self.start.addingTimeInterval(1))
        #expect(try first.holdEnd(Self.app, now: Self.start) == longer)

        let another = ProviderApp(tokenEndpoint: "https://api.example.net/token", clientId: "crm-app")
        try first.hold(another, until: longer.addingTimeInterval(60), now: longer.addingTimeInterval(1))
        #expect(try other.holdEnd(Self.app, now: Self.start) == nil, "a hold that had ended when another was made is forgotten")
        #expect(try other.holdEnd(another, now: longer) == longer.addingTimeInterval(60))
    }
}
