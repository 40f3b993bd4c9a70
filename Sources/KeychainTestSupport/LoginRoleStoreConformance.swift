public import Foundation
public import KeychainCore
import Testing

/// What every `LoginRoleStore` must do, checked with `#expect`: call `run()` from one test per
/// backend. `make` returns a new, empty store (and whatever keeps it alive).
public struct LoginRoleStoreConformance: Sendable {
    public typealias Factory = @Sendable () throws -> (store: any LoginRoleStore, keepAlive: AnyObject?)

    private let make: Factory

    public init(_ make: @escaping Factory) { self.make = make }

    public func run() throws {
        try putReadListReplaceAndRemove()
    }

    /// A role with every setting round-trips; a second put replaces it (answering the one it
    /// replaced) with a later version even within the same millisecond; roles list by name.
    public func putReadListReplaceAndRemove() throws {
        let (roles, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        let time = Date(millisecondsSince1970: 1_800_000_000_000)
        var ci = LoginRole(
            name: "ci", issuer: "https://token.actions.example", keys: .discovery, audiences: ["keychaind"],
            boundClaims: [.init(claim: "repository", globs: ["acme/*"]), .init(claim: "/ref", globs: ["refs/heads/main", "refs/tags/*"])],
            algorithms: ["RS256"], accessGroups: ["builds"], tokenTTL: 300, tokenMaxTTL: 900, leeway: 30, maxLiveTokens: 50)
        let first = try roles.putRole(ci, at: time)
        #expect(first.replaced == nil && first.stored.updatedAt == time)
        #expect(try roles.role(named: "ci") == first.stored)
        let k8s = LoginRole(
            name: "k8s.payments", issuer: "https://kubernetes.default.svc", keys: .publicKeys(["-----BEGIN PUBLIC KEY-----\nAA==\n-----END PUBLIC KEY-----\n"]),
            caPEM: "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n", audiences: ["https://kubernetes.default.svc"],
            boundSubject: "system:serviceaccount:payments:*", accessGroups: ["payments"], allowIssuerAudience: true)
        let second = try roles.putRole(k8s, at: time)
        #expect(try roles.roles().map(\.name) == ["ci", "k8s.payments"])
        #expect(try roles.role(named: "k8s.payments") == second.stored)
        ci.keys = .jwksURL("https://token.actions.example/keys")
        ci.accessGroups = ["builds", "cache"]
        let replaced = try roles.putRole(ci, at: time)
        #expect(replaced.replaced == first.stored)
        #expect(replaced.stored.updatedAt > first.stored.updatedAt)
        #expect(try roles.role(named: "ci")?.keys == .jwksURL("https://token.actions.example/keys"))
        #expect(try roles.role(named: "ci")?.accessGroups == ["builds", "cache"])
        #expect(try roles.removeRole(named: "ci"))
        #expect(try !roles.removeRole(named: "ci"))
        #expect(try roles.role(named: "ci") == nil)
        #expect(try roles.roles().map(\.name) == ["k8s.payments"])
    }
}
